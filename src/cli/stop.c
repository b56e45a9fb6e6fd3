/*
 * The stop flag: SIGTERM, SIGINT and SIGHUP set it (stream_stop_on_signals); the line reader
 * (lines.c) and the stream (stream.c) read it; the exit status says which signal it was.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

/* The message a SIGBUS on a shared mapping prints, built before the signal can come (a handler
 * may only write). */
static char mapping_message[1024];
static size_t mapping_message_len;

static void mapping_failed(int sig)
{
    (void)sig;
    ssize_t written = write(STDERR_FILENO, mapping_message, mapping_message_len);
    (void)written;
    _exit(EXIT_RUNTIME);
}

void stop_on_mapping_failure(const char *path)
{
    int len = snprintf(mapping_message, sizeof mapping_message,
                       "simdbloom: %s was truncated by another process while this run had it "
                       "mapped (SIGBUS): stopped. Lines claimed and not yet written are in the "
                       "claims journal: the same command, run again on a restored or new filter "
                       "file, writes them\n",
                       path);
    mapping_message_len = len < 0                                ? 0
                          : (size_t)len < sizeof mapping_message ? (size_t)len
                                                                 : sizeof mapping_message - 1;
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = mapping_failed;
    sigemptyset(&action.sa_mask);
    sigaction(SIGBUS, &action, NULL);
}
