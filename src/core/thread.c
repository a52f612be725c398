#include <errno.h>
#include <string.h>
#include <time.h>

#include "eb/thread.h"

enum eb_status eb_thread_create(struct eb_thread *t, void *(*fn)(void *), void *arg,
                                struct eb_diag *diag)
{
    int rc = pthread_create(&t->handle, NULL, fn, arg);
    if (rc != 0)
        return eb_diag_fail(diag, EB_ERR_NOMEM, "failed to create a thread: %s", strerror(rc));
    return EB_OK;
}

void eb_thread_join(struct eb_thread *t)
{
    int rc = pthread_join(t->handle, NULL);
    EB_ASSERT(rc == 0);
}

void eb_mutex_init(struct eb_mutex *m)
{
    int rc = pthread_mutex_init(&m->m, NULL);
    EB_ASSERT(rc == 0);
}

void eb_mutex_fini(struct eb_mutex *m)
{
    pthread_mutex_destroy(&m->m);
}

void eb_mutex_lock(struct eb_mutex *m)
{
    int rc = pthread_mutex_lock(&m->m);
    EB_ASSERT(rc == 0);
}

void eb_mutex_unlock(struct eb_mutex *m)
{
    int rc = pthread_mutex_unlock(&m->m);
    EB_ASSERT(rc == 0);
}

void eb_cond_init(struct eb_cond *c)
{
    pthread_condattr_t attr;
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&c->c, &attr);
    pthread_condattr_destroy(&attr);
    EB_ASSERT(rc == 0);
}

void eb_cond_fini(struct eb_cond *c)
{
    pthread_cond_destroy(&c->c);
}

void eb_cond_wait(struct eb_cond *c, struct eb_mutex *m)
{
    int rc = pthread_cond_wait(&c->c, &m->m);
    EB_ASSERT(rc == 0);
}

int eb_cond_timedwait(struct eb_cond *c, struct eb_mutex *m, uint64_t timeout_ns)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    uint64_t ns = (uint64_t)ts.tv_nsec + timeout_ns;
    ts.tv_sec += (time_t)(ns / 1000000000ull);
    ts.tv_nsec = (long)(ns % 1000000000ull);
    int rc = pthread_cond_timedwait(&c->c, &m->m, &ts);
    EB_ASSERT(rc == 0 || rc == ETIMEDOUT);
    return rc == ETIMEDOUT;
}

void eb_cond_signal(struct eb_cond *c)
{
    pthread_cond_signal(&c->c);
}

void eb_cond_broadcast(struct eb_cond *c)
{
    pthread_cond_broadcast(&c->c);
}
