// TLS between two threads of one process over a socketpair, with a key
// and a self-signed certificate made at start (no files, no network).
// The client sends 3 messages of 100, 200 and 3000 bytes with SSL_write;
// the server reads them with SSL_read and answers with one 50-byte
// message. So: SSL_write 4 times (3 client + 1 server), 3350 bytes in all.
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static const int kSizes[] = {100, 200, 3000};
static const int kReply = 50;

static void die(const char *what) {
  fprintf(stderr, "tls_pair: %s\n", what);
  ERR_print_errors_fp(stderr);
  _exit(1);
}

static X509 *self_signed(EVP_PKEY *key) {
  X509 *cert = X509_new();
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), 0);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_set_pubkey(cert, key);
  X509_NAME *name = X509_get_subject_name(cert);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             (const unsigned char *)"localhost", -1, -1, 0);
  X509_set_issuer_name(cert, name);
  if (!X509_sign(cert, key, EVP_sha256()))
    die("cannot sign the certificate");
  return cert;
}

static void *client(void *arg) {
  int fd = *(int *)arg;
  SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
  SSL *ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  if (SSL_connect(ssl) != 1)
    die("SSL_connect");
  char buf[4096];
  memset(buf, 'c', sizeof(buf));
  for (int i = 0; i < 3; i++)
    if (SSL_write(ssl, buf, kSizes[i]) != kSizes[i])
      die("SSL_write (client)");
  int got = SSL_read(ssl, buf, sizeof(buf));
  if (got != kReply)
    die("SSL_read (client)");
  SSL_shutdown(ssl);
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  return NULL;
}

int main(void) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
    die("socketpair");
  EVP_PKEY *key = EVP_EC_gen("P-256");
  if (!key)
    die("cannot make a key");
  X509 *cert = self_signed(key);
  SSL_CTX *ctx = SSL_CTX_new(TLS_server_method());
  if (SSL_CTX_use_certificate(ctx, cert) != 1 ||
      SSL_CTX_use_PrivateKey(ctx, key) != 1)
    die("cannot use the certificate");
  pthread_t t;
  pthread_create(&t, NULL, client, &sv[1]);
  SSL *ssl = SSL_new(ctx);
  SSL_set_fd(ssl, sv[0]);
  if (SSL_accept(ssl) != 1)
    die("SSL_accept");
  char buf[4096];
  int total = 0;
  while (total < 3300) {
    int n = SSL_read(ssl, buf, sizeof(buf));
    if (n <= 0)
      die("SSL_read (server)");
    total += n;
  }
  memset(buf, 's', kReply);
  if (SSL_write(ssl, buf, kReply) != kReply)
    die("SSL_write (server)");
  pthread_join(t, NULL);
  SSL_free(ssl);
  SSL_CTX_free(ctx);
  printf("tls_pair: server got %d bytes\n", total);
  return 0;
}
