/*
 * The stop flag: SIGTERM, SIGINT and SIGHUP set it (stream_stop_on_signals); the line reader
 * (lines.c) and the stream (stream.c) read it; the exit status says which signal it was.
 */
#include <signal.h>
#include <string.h>

#include "cli.h"

static volatile sig_atomic_t stop_signal;

static void request_stop(int sig)
{
    stop_signal = sig;
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
}

int stop_exit_status(void)
{
    return 128 + stop_signal;
}

int line_reader_stop_requested(void)
{
    return stop_signal != 0;
}
