'use strict';
// A module of the skill, required relative to the script that uses it.
const { shout } = require('../lib/util');

exports.say = (word) => shout(`helper says ${word}`);
