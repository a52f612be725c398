/*
 * Threads, mutexes and condition variables (thin pthread wrappers; libuv-style: creation
 * returns a status, lock/unlock assert).
 */
#ifndef EB_THREAD_H
#define EB_THREAD_H

#include <pthread.h>
#include <stdint.h>

#include "eb/diag.h"

struct eb_thread {
    pthread_t handle;
};
struct eb_mutex {
    pthread_mutex_t m;
};
struct eb_cond {
    pthread_cond_t c;
};

EB_NODISCARD enum eb_status eb_thread_create(struct eb_thread *t, void *(*fn)(void *), void *arg,
                                             struct eb_diag *diag);
void eb_thread_join(struct eb_thread *t);

void eb_mutex_init(struct eb_mutex *m);
void eb_mutex_fini(struct eb_mutex *m);
void eb_mutex_lock(struct eb_mutex *m);
void eb_mutex_unlock(struct eb_mutex *m);

void eb_cond_init(struct eb_cond *c);
void eb_cond_fini(struct eb_cond *c);
void eb_cond_wait(struct eb_cond *c, struct eb_mutex *m);
/** Waits at most `timeout_ns`; returns 1 on timeout, 0 when signalled. */
int eb_cond_timedwait(struct eb_cond *c, struct eb_mutex *m, uint64_t timeout_ns);
void eb_cond_signal(struct eb_cond *c);
void eb_cond_broadcast(struct eb_cond *c);

#endif
