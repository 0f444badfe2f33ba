'use strict';
// Two levels of relative requires: scripts/tool.js -> ./helper -> ../lib/util.
exports.shout = (s) => s;
