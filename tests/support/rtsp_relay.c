/*
 * eb_rtsp_relay: a minimal RTSP server on the loopback for the network-source tests
 * (tests/e2e/test_network.sh). FFmpeg's RTSP muxer cannot listen for players, so the test
 * streams with `ffmpeg -re ... -f rtp rtp://127.0.0.1:RTP?rtcpport=RTCP -sdp_file SDP` and this
 * relay serves that SDP to an RTSP player (OPTIONS, DESCRIBE, SETUP with RTP over the RTSP
 * connection, PLAY, GET_PARAMETER, TEARDOWN) and forwards each RTP packet it receives to the
 * playing client, interleaved on channel 0. One client at a time.
 *
 *   eb_rtsp_relay PORT_FILE SDP_FILE [--silent] [--drop_after S] [--down S]
 *
 * It binds an RTSP port, an RTP port and an RTCP port on 127.0.0.1 (all chosen by the kernel)
 * and writes "RTSP RTP RTCP\n" to PORT_FILE (atomically) once they are open.
 *   --silent        accept connections but never answer (a server that hangs)
 *   --drop_after S  S seconds after PLAY, close the client and stop listening (the server
 *                   goes away), once
 *   --down S        then listen again on the same port after S seconds; negative: exit
 * Runs until killed (or the drop with a negative --down). Test code: plain POSIX, no FFmpeg.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A socket of `type` bound to 127.0.0.1:port (0 = any free one); its port in *port_out. */
static int bind_local(int type, int port, int *port_out)
{
    int fd = socket(AF_INET, type, 0);
    if (fd < 0)
        return -1;
    int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((uint16_t)port);
    socklen_t len = sizeof(a);
    if (bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 ||
        (type == SOCK_STREAM && listen(fd, 4) != 0) ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0) {
        close(fd);
        return -1;
    }
    *port_out = ntohs(a.sin_port);
    return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* The value of header `name` in the request `req` (up to the blank line), copied into out. */
static void header(const char *req, const char *name, char *out, size_t out_size)
{
    out[0] = '\0';
    size_t n = strlen(name);
    for (const char *l = strstr(req, "\r\n"); l != NULL; l = strstr(l + 2, "\r\n")) {
        const char *h = l + 2;
        if (strncasecmp(h, name, n) == 0 && h[n] == ':') {
            h += n + 1;
            while (*h == ' ')
                h++;
            size_t k = strcspn(h, "\r\n");
            if (k >= out_size)
                k = out_size - 1;
            memcpy(out, h, k);
            out[k] = '\0';
            return;
        }
    }
}

/* Answers one request; returns 1 when the client starts playing, -1 to close it, else 0. */
static int answer(int fd, const char *req, const char *sdp_path)
{
    char cseq[32], transport[256], resp[8192];
    header(req, "CSeq", cseq, sizeof(cseq));
    header(req, "Transport", transport, sizeof(transport));
    int n, ret = 0;
    if (strncmp(req, "OPTIONS", 7) == 0) {
        n = snprintf(resp, sizeof(resp),
                     "RTSP/1.0 200 OK\r\nCSeq: %s\r\nPublic: OPTIONS, DESCRIBE, SETUP, PLAY, "
                     "GET_PARAMETER, TEARDOWN\r\n\r\n",
                     cseq);
    } else if (strncmp(req, "DESCRIBE", 8) == 0) {
        char sdp[4096];
        size_t len = 0;
        FILE *fp = fopen(sdp_path, "r");
        if (fp != NULL) {
            len = fread(sdp, 1, sizeof(sdp) - 64, fp);
            fclose(fp);
        }
        if (len == 0)
            n = snprintf(resp, sizeof(resp), "RTSP/1.0 404 Not Found\r\nCSeq: %s\r\n\r\n", cseq);
        else {
            len += (size_t)snprintf(sdp + len, sizeof(sdp) - len, "a=control:streamid=0\r\n");
            n = snprintf(resp, sizeof(resp),
                         "RTSP/1.0 200 OK\r\nCSeq: %s\r\nContent-Type: application/sdp\r\n"
                         "Content-Length: %zu\r\n\r\n%.*s",
                         cseq, len, (int)len, sdp);
        }
    } else if (strncmp(req, "SETUP", 5) == 0) {
        if (strstr(transport, "interleaved") == NULL && strstr(transport, "TCP") == NULL)
            n = snprintf(resp, sizeof(resp),
                         "RTSP/1.0 461 Unsupported Transport\r\nCSeq: %s\r\n\r\n", cseq);
        else
            n = snprintf(resp, sizeof(resp),
                         "RTSP/1.0 200 OK\r\nCSeq: %s\r\nSession: 12345678;timeout=60\r\n"
                         "Transport: RTP/AVP/TCP;unicast;interleaved=0-1\r\n\r\n",
                         cseq);
    } else if (strncmp(req, "PLAY", 4) == 0) {
        n = snprintf(
            resp, sizeof(resp),
            "RTSP/1.0 200 OK\r\nCSeq: %s\r\nSession: 12345678\r\nRange: npt=0.000-\r\n\r\n", cseq);
        ret = 1;
    } else if (strncmp(req, "TEARDOWN", 8) == 0) {
        n = snprintf(resp, sizeof(resp), "RTSP/1.0 200 OK\r\nCSeq: %s\r\n\r\n", cseq);
        ret = -1;
    } else {
        n = snprintf(resp, sizeof(resp), "RTSP/1.0 200 OK\r\nCSeq: %s\r\nSession: 12345678\r\n\r\n",
                     cseq);
    }
    if (send_all(fd, resp, (size_t)n) != 0)
        return -1;
    return ret;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: eb_rtsp_relay PORT_FILE SDP_FILE [--silent] [--drop_after S] "
                        "[--down S]\n");
        return 2;
    }
    const char *port_file = argv[1], *sdp_path = argv[2];
    int silent = 0;
    double drop_after = -1, down = -1;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--silent") == 0)
            silent = 1;
        else if (strcmp(argv[i], "--drop_after") == 0 && i + 1 < argc)
            drop_after = strtod(argv[++i], NULL);
        else if (strcmp(argv[i], "--down") == 0 && i + 1 < argc)
            down = strtod(argv[++i], NULL);
        else {
            fprintf(stderr, "eb_rtsp_relay: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    signal(SIGPIPE, SIG_IGN);
    int rtsp_port, rtp_port, rtcp_port;
    int lfd = bind_local(SOCK_STREAM, 0, &rtsp_port);
    int ufd = bind_local(SOCK_DGRAM, 0, &rtp_port);
    int cfd_rtcp = bind_local(SOCK_DGRAM, 0, &rtcp_port);
    if (lfd < 0 || ufd < 0 || cfd_rtcp < 0) {
        perror("eb_rtsp_relay: bind");
        return 1;
    }
    char tmp[4096];
    snprintf(tmp, sizeof(tmp), "%s.tmp", port_file);
    FILE *pf = fopen(tmp, "w");
    if (pf == NULL || fprintf(pf, "%d %d %d\n", rtsp_port, rtp_port, rtcp_port) < 0 ||
        fclose(pf) != 0 || rename(tmp, port_file) != 0) {
        perror("eb_rtsp_relay: port file");
        return 1;
    }
    int cfd = -1, playing = 0, dropped = 0;
    double play_start = 0, up_at = 0;
    char in[65536];
    size_t in_len = 0;
    unsigned char pkt[65536 + 4];
    for (;;) {
        struct pollfd p[4];
        int np = 0, il = -1, ic = -1;
        p[np++] = (struct pollfd){.fd = ufd, .events = POLLIN};
        p[np++] = (struct pollfd){.fd = cfd_rtcp, .events = POLLIN};
        if (lfd >= 0) {
            il = np;
            p[np++] = (struct pollfd){.fd = lfd, .events = POLLIN};
        }
        if (cfd >= 0) {
            ic = np;
            p[np++] = (struct pollfd){.fd = cfd, .events = POLLIN};
        }
        if (poll(p, (nfds_t)np, 50) < 0 && errno != EINTR)
            return 1;
        const double t = now_s();
        if (playing && !dropped && drop_after >= 0 && t - play_start >= drop_after) {
            dropped = 1;
            close(cfd);
            cfd = -1;
            playing = 0;
            close(lfd);
            lfd = -1;
            if (down < 0)
                return 0;
            up_at = t + down;
            continue;
        }
        if (lfd < 0 && dropped && t >= up_at) {
            lfd = bind_local(SOCK_STREAM, rtsp_port, &rtsp_port);
            if (lfd < 0)
                up_at = t + 0.05; /* the port is still held: try again */
            continue;
        }
        if (p[0].revents & POLLIN) {
            ssize_t k = recv(ufd, pkt + 4, sizeof(pkt) - 4, 0);
            if (k > 0 && playing) {
                pkt[0] = '$';
                pkt[1] = 0;
                pkt[2] = (unsigned char)(k >> 8);
                pkt[3] = (unsigned char)k;
                if (send_all(cfd, (const char *)pkt, (size_t)k + 4) != 0) {
                    close(cfd);
                    cfd = -1;
                    playing = 0;
                }
            }
        }
        if (p[1].revents & POLLIN)
            (void)recv(cfd_rtcp, pkt, sizeof(pkt), 0); /* the sender's reports: not relayed */
        if (il >= 0 && (p[il].revents & POLLIN)) {
            int fd = accept(lfd, NULL, NULL);
            if (fd >= 0) {
                if (cfd >= 0)
                    close(cfd);
                cfd = fd;
                playing = 0;
                in_len = 0;
            }
            continue;
        }
        if (ic < 0 || !(p[ic].revents & (POLLIN | POLLHUP | POLLERR)))
            continue;
        ssize_t k = recv(cfd, in + in_len, sizeof(in) - 1 - in_len, 0);
        if (k <= 0 || silent) {
            if (k <= 0) {
                close(cfd);
                cfd = -1;
                playing = 0;
            }
            continue;
        }
        in_len += (size_t)k;
        in[in_len] = '\0';
        for (;;) {
            if (in_len >= 4 && in[0] == '$') { /* the client's RTCP on the connection */
                size_t len = 4 + (((unsigned char)in[2] << 8) | (unsigned char)in[3]);
                if (in_len < len)
                    break;
                memmove(in, in + len, in_len - len);
                in_len -= len;
                continue;
            }
            char *end = strstr(in, "\r\n\r\n");
            if (end == NULL || in[0] == '$')
                break;
            const size_t len = (size_t)(end + 4 - in);
            char clen[32];
            header(in, "Content-Length", clen, sizeof(clen));
            const size_t body = (size_t)strtoul(clen, NULL, 10);
            if (in_len < len + body)
                break;
            in[len - 2] = '\0';
            const int r = answer(cfd, in, sdp_path);
            memmove(in, in + len + body, in_len - len - body);
            in_len -= len + body;
            in[in_len] = '\0';
            if (r == 1) {
                playing = 1;
                play_start = t;
            } else if (r < 0) {
                close(cfd);
                cfd = -1;
                playing = 0;
                in_len = 0;
                break;
            }
        }
    }
}
