/*
 * LD_PRELOAD shim for usrsctp's example programs (tsctp, ...), which offer no option for
 * the protocol's timers: after usrsctp_init, it sets the defaults new associations take
 * from environment variables, through usrsctp's own sysctl API (usrsctp.h):
 *
 *   USRSCTP_RTO_MIN, USRSCTP_RTO_MAX, USRSCTP_RTO_INITIAL   milliseconds (RFC 9260 §16)
 *   USRSCTP_PATH_MAX_RETRANS                                 Path.Max.Retrans
 *   USRSCTP_HB_INTERVAL                                      milliseconds
 *
 * Built by the interoperability tests (tests/test_real_usrsctp.py) with the system's C
 * compiler; only the variables that are set change anything.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef void (*usrsctp_init_fn)(uint16_t, int (*)(void *, void *, size_t, uint8_t, uint8_t),
                                void (*)(const char *, ...));

typedef int (*setter_fn)(uint32_t);

/* The library's setter `setter` (looked up in the library tsctp loaded) with the value of
 * the environment variable `name`, if it is set. */
static void set_from(const char *name, const char *setter) {
    const char *v = getenv(name);
    if (v == NULL || *v == '\0') {
        return;
    }
    setter_fn set = (setter_fn)dlsym(RTLD_DEFAULT, setter);
    if (set == NULL) {
        abort();
    }
    set((uint32_t)strtoul(v, NULL, 10));
}

void usrsctp_init(uint16_t port, int (*conn_output)(void *, void *, size_t, uint8_t, uint8_t),
                  void (*debug_printf)(const char *, ...)) {
    usrsctp_init_fn real = (usrsctp_init_fn)dlsym(RTLD_NEXT, "usrsctp_init");
    if (real == NULL) {
        abort();
    }
    real(port, conn_output, debug_printf);
    set_from("USRSCTP_RTO_MIN", "usrsctp_sysctl_set_sctp_rto_min_default");
    set_from("USRSCTP_RTO_MAX", "usrsctp_sysctl_set_sctp_rto_max_default");
    set_from("USRSCTP_RTO_MAX", "usrsctp_sysctl_set_sctp_init_rto_max_default");
    set_from("USRSCTP_RTO_INITIAL", "usrsctp_sysctl_set_sctp_rto_initial_default");
    set_from("USRSCTP_PATH_MAX_RETRANS", "usrsctp_sysctl_set_sctp_path_rtx_max_default");
    set_from("USRSCTP_HB_INTERVAL", "usrsctp_sysctl_set_sctp_heartbeat_interval_default");
}
