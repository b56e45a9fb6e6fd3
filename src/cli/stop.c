/*
 * The stop flag: SIGTERM, SIGINT and SIGHUP set it (stream_stop_on_signals); the line reader
 * (lines.c) and the stream (stream.c) read it; the exit status says which signal it was. A
 * worker of a shared table stopped while its call into the table has not returned within a
 * second (it waits for a lock another worker keeps: src/os/lockword.c) exits then, as a kill
 * would: its claims journal keeps what it claimed and did not write, for the next run. And
 * SIGBUS on a mapping whose file was truncated: the shared filter's, or the input being read
 * (told apart by the faulting address), each stops the command with one line.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "stream.h"

static volatile sig_atomic_t stop_signal, in_shared_call;

static const char waiting_message[] =
    "simdbloom: stopped by a signal while waiting for a lock another worker keeps; the lines this "
    "run claimed and did not write are in its claims journal: the same command run again writes "
    "them\n";

static void request_stop(int sig)
{
    stop_signal = sig;
    if (in_shared_call)
        alarm(1); /* the call has a second to return */
}

/* The second a call has after a stop signal: its wait for the lock sleeps, and the first alarm
 * ends that sleep (the library then gives up the wait, and the run stops as after any failed
 * call); a call still running a second later ends the process. */
static void stop_waiting(int sig)
{
    static volatile sig_atomic_t alarms;
    (void)sig;
    if (!in_shared_call)
        return;
    if (alarms++ == 0) {
        alarm(1);
        return;
    }
    ssize_t written = write(STDERR_FILENO, waiting_message, sizeof waiting_message - 1);
    (void)written;
    _exit(128 + stop_signal);
}

void stop_signals_hold(sigset_t *old)
{
    sigset_t stops;
    sigemptyset(&stops);
    sigaddset(&stops, SIGTERM);
    sigaddset(&stops, SIGINT);
    sigaddset(&stops, SIGHUP);
    sigaddset(&stops, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &stops, old);
}

void stop_signals_release(const sigset_t *old)
{
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

void stop_mark_shared_call(int on)
{
    in_shared_call = on;
    if (!on && stop_signal)
        alarm(0); /* returned: no alarm for it */
}

void stream_stop_on_signals(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = request_stop; /* no SA_RESTART: a read waiting for input returns */
    sigemptyset(&action.sa_mask);
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);
    sigaction(SIGHUP, &action, NULL);
    action.sa_handler = stop_waiting;
    action.sa_flags = SA_RESTART; /* (a sleep still ends: nanosleep is never restarted) */
    sigaction(SIGALRM, &action, NULL);
}

int stop_exit_status(void)
{
    return 128 + stop_signal;
}

int line_reader_stop_requested(void)
{
    return stop_signal != 0;
}

/* The messages a SIGBUS prints, built before the signal can come (a handler may only write):
 * one for the shared filter's mapping, one for the input file mapped at the time. */
static char mapping_message[1024], input_message[1024];
static size_t mapping_message_len, input_message_len;
static const char *volatile input_map;
static volatile size_t input_map_len;

static void mapping_failed(int sig, siginfo_t *info, void *context)
{
    (void)context;
    const char *at = (const char *)info->si_addr;
    const char *map = input_map;
    int in_input = map && at >= map && at < map + input_map_len;
    if (!in_input && mapping_message_len == 0) { /* not ours: the default, a core dump */
        signal(sig, SIG_DFL);
        return;
    }
    ssize_t written = in_input ? write(STDERR_FILENO, input_message, input_message_len)
                               : write(STDERR_FILENO, mapping_message, mapping_message_len);
    (void)written;
    _exit(EXIT_RUNTIME);
}

static size_t message_length(int len, size_t room)
{
    return len < 0 ? 0 : (size_t)len < room ? (size_t)len : room - 1;
}

static void catch_bus_errors(void)
{
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = mapping_failed;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, NULL);
}

void stop_on_mapping_failure(const char *path)
{
    int len = snprintf(mapping_message, sizeof mapping_message,
                       "simdbloom: %s was truncated by another process while this run had it "
                       "mapped (SIGBUS): stopped. Lines claimed and not yet written are in the "
                       "claims journal: the same command, run again on a restored or new filter "
                       "file, writes them\n",
                       path);
    mapping_message_len = message_length(len, sizeof mapping_message);
    catch_bus_errors();
}

void stop_on_input_truncated(const char *map, size_t len, const char *path)
{
    input_map = NULL;
    if (!map)
        return;
    int n = snprintf(input_message, sizeof input_message,
                     "simdbloom: %s was truncated while this run was reading it (SIGBUS): "
                     "stopped\n",
                     path);
    input_message_len = message_length(n, sizeof input_message);
    input_map_len = len;
    input_map = map;
    catch_bus_errors();
}
