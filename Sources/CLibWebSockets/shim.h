#ifndef RETRORAPID_CLIBWEBSOCKETS_SHIM_H
#define RETRORAPID_CLIBWEBSOCKETS_SHIM_H

#include <libwebsockets.h>

// LWS_PRE is a macro: the headroom libwebsockets needs before every payload given to lws_write.
static const size_t rr_lws_pre = LWS_PRE;

// lwsl_* are variadic macros that Swift cannot call; this takes one preformatted line.
static inline void rr_lws_log(int level, const char *line) {
    _lws_log(level, "%s\n", line);
}

// Not libwebsockets, but the socket under it: the bytes a TCP connection has received and
// sent in its whole life (Linux TCP_INFO). Lets the HTTP callback tell a connection
// libwebsockets drops mid-head, having answered nothing, from one that sent nothing
// (LWSHTTPConnection.swift). glibc's struct tcp_info stops before these fields and
// <linux/tcp.h> clashes with it in Swift's module cache, so they are read at their offsets in
// the kernel's struct tcp_info (an ABI that only ever grows at the end): tcpi_bytes_received
// at 128 (Linux 4.1), tcpi_bytes_sent at 200 (Linux 4.19); tcpi_state is the first byte.
// Returns 0, or -1 when the socket cannot say (not TCP, or an older kernel). Tested in
// TCPByteCountTests.swift.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

static inline int rr_tcp_byte_counts(int fd, uint64_t *received, uint64_t *sent, uint8_t *state) {
    unsigned char info[256];
    socklen_t length = sizeof(info);
    memset(info, 0, sizeof(info));
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, info, &length) != 0) return -1;
    if (length < 208) return -1;
    memcpy(received, info + 128, sizeof(*received));
    memcpy(sent, info + 200, sizeof(*sent));
    *state = info[0];
    return 0;
}

#endif
