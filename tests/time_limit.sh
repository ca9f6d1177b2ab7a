#!/bin/sh
# make check runs every test through this (LOG_COMPILER): a test still running after
# MF_TEST_TIMEOUT seconds (900 unless set) is killed with what it started (timeout's process
# group), and a TAP "Bail out!" names it and the limit, so that a test that hangs fails by name
# instead of holding up the suite. ^C (or SIGTERM, SIGHUP) to make check reaches the test too.
limit=${MF_TEST_TIMEOUT:-900}
start=$(date +%s)
timeout -k 10 "$limit" "$@" 0<&0 & pid=$!
trap 'kill -TERM "$pid" 2> /dev/null' INT TERM HUP
while :; do
	wait "$pid"; rc=$?
	kill -0 "$pid" 2> /dev/null || break # (a wait cut short by a trapped signal: wait again)
done
if [ "$rc" -eq 124 ] || { [ "$rc" -eq 137 ] && [ $(($(date +%s) - start)) -ge "$limit" ]; }; then
	echo "Bail out! $1 still ran after $limit s (MF_TEST_TIMEOUT): killed"
fi
exit "$rc"
