#!/bin/sh
# A process tree whose programs die of signals (follow.test): an exec'd
# program killed, then the script itself.
/bin/true
sh -c 'kill -KILL $$'
kill -KILL $$
