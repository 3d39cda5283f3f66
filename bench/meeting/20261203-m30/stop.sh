#!/usr/bin/env bash
# runs TestDictationDuringMeeting from binary $1, stops the whole test process for $2 s, $3 s after the meeting's call begins
bin=$1 hold=$2 after=$3 log=$4
cd /work/m30/app
HARK_TESTDATA=/work/shared HARK_TEST_TIMEOUT_SCALE=2 $bin -test.run 'TestDictationDuringMeeting$' -test.v > $log 2>&1 &
pid=$!
until grep -q "of the meeting: the call" $log 2>/dev/null; do sleep 0.1; kill -0 $pid 2>/dev/null || break; done
sleep $after
echo "STOP $(date -u +%T.%N)" >> $log.stop
kill -STOP $pid; sleep $hold; kill -CONT $pid
echo "CONT $(date -u +%T.%N)" >> $log.stop
wait $pid; echo "rc $?" >> $log.stop
