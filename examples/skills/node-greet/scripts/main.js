// Greet every name in the input JSON read from stdin; print the result as JSON.
'use strict';

let text = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { text += chunk; });
process.stdin.on('end', () => {
  const input = text.trim() ? JSON.parse(text) : {};
  const names = Array.isArray(input.names) ? input.names : ['world'];
  process.stdout.write(JSON.stringify({ greetings: names.map((n) => `Hello, ${n}!`) }) + '\n');
});
