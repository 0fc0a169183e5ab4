// Writes the bad input lines of tests/unit/host/cli_bad_input_test.cc to stdout, for comparing the
// WebAssembly CLI (web/mtlite.mjs) with the native one: invalid UTF-8 of every kind between good
// lines, NUL / BOM / control / bidi characters, an empty line, a 1 MB line, CRLF line ends and a
// last line without '\n'.
const lines = [
  'A dog runs in the park.',
  'A man \xc0\xaf walks.', 'x\xe0\x80\xafy', '\xf0\x82\x82\xac euro', 'half \xed\xa0\x80 pair', '\xed\xbf\xbf',
  '\xed\xa0\xbd\xed\xb8\x80', 'big \xf4\x90\x80\x80', '\xf7\xbf\xbf\xbf', 'A dog \xff runs.', '\xfe', '\x80 cat',
  'snow \xe2\x82', 'A bike \xf0\x9f\x98', '\xc3 A woman sits.',
  'Two children play in the snow.',
  '',
  '\xef\xbb\xbfA man is riding a bike.',
  'Two dogs\x01 play\x7f in the\x1b snow.',
  'A dog\0 runs in the park.',
  'A \xe2\x80\xaeman\xe2\x80\xac is \xe2\x81\xa7riding\xe2\x81\xa9 a bike \xe2\x80\x8f.',
  'Zero\xe2\x80\x8bwidth\xe2\x80\x8d joiners \xef\xbb\xbf inside.',
  'carriage\rreturn inside',
  'word '.repeat(1 << 18),
  ' \t ',
  'A cat sleeps.\r',
  'Thank you.',
];
// Each character of a line above is one byte (latin1).
process.stdout.write(Buffer.from(lines.join('\n') + '\nThe last line has no newline.', 'latin1'));
