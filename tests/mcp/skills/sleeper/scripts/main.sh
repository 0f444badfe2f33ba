#!/bin/bash
sleep "${1:-3}"
printf '{"slept": %s}\n' "${1:-3}"
