/* Shared by the test programs and the tests: the ctx each program gets. */
#ifndef UBT_VM_COMMON_H
#define UBT_VM_COMMON_H

/* A stand-in for a probe's arguments: numbers and pointers into the test. */
struct args {
  unsigned long long arg[6];
};

struct event {
  unsigned long long pid_tgid;
  unsigned long long value;
  char comm[16];
  char text[32];
};

#endif
