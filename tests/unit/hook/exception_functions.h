#pragma once

extern "C" {
int hk_thrower(int x); // throws std::runtime_error("thrown X") if x > 0
int hk_middle(int x);  // hk_thrower(x) + 1
int hk_outer(int x);   // hk_middle(x) + 10
int hk_catcher(int x); // catches hk_thrower's exception: 1000
int hk_bt_leaf(void **frames, int max);   // backtrace()
int hk_bt_middle(void **frames, int max); // calls hk_bt_leaf
int hk_bt_caller(void **frames, int max); // calls hk_bt_middle
void hk_exit_thread(long code);           // pthread_exit
long hk_exiting_middle(long code);        // calls hk_exit_thread
}
