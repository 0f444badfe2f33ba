#!/usr/bin/env node
'use strict';
// A relative require, and one from the skill root (lib/util), as skills written for
// "node scripts/tool.js" from their root use.
const { say } = require('./helper');
const util = require('lib/util');

console.log(util.shout(say(process.argv[2] || 'nothing')));
