#!/bin/sh
# sum.sh prints the sum of its two arguments.
echo $(( $1 - $2 ))
