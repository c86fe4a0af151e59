import assert from 'node:assert/strict';
import { test } from 'node:test';
import { argumentAnswer, argumentRows, LEAVE_OUT } from '../../src/prompts/argumentModel';
import { blobBytes, documentPath, languageForMime, resourceRows, resourceView, saveName } from '../../src/resources/resourceModel';
import { promptMarkdown, promptRows, promptText } from '../../src/serverPrompts/promptModel';

test('mimeType → language, parameters and suffixes understood, plaintext otherwise', () => {
  assert.equal(languageForMime('text/markdown'), 'markdown');
  assert.equal(languageForMime('application/json'), 'json');
  assert.equal(languageForMime('application/json; charset=utf-8'), 'json');
  assert.equal(languageForMime('application/vnd.api+json'), 'json');
  assert.equal(languageForMime('application/atom+xml'), 'xml');
  assert.equal(languageForMime('text/x-python'), 'python');
  assert.equal(languageForMime('TEXT/HTML'), 'html');
  assert.equal(languageForMime('text/plain'), 'plaintext');
  assert.equal(languageForMime('application/x-unknown'), 'plaintext');
  assert.equal(languageForMime(undefined), 'plaintext');
});

test('the quick pick rows: resources then templates, server and mimeType, URI below', () => {
  const rows = resourceRows(
    [{ server: 'everything', uri: 'demo://resource/static/document/features.md', name: 'features.md', mimeType: 'text/markdown', description: 'Docs' }],
    [{ server: 'everything', uriTemplate: 'demo://resource/dynamic/text/{resourceId}', name: 'Dynamic Text Resource', mimeType: 'text/plain' }],
  );
  assert.deepEqual(rows.map((r) => [r.kind, r.label, r.description, r.detail]), [
    ['resource', 'features.md', 'everything · text/markdown', 'demo://resource/static/document/features.md — Docs'],
    ['template', 'Dynamic Text Resource', 'everything · template, text/plain', 'demo://resource/dynamic/text/{resourceId}'],
  ]);
  assert.equal(resourceRows([{ server: 's', uri: 'u://x', name: 'n', title: 'Nice' }], [])[0].label, 'Nice');
});

test('a read result is shown as text, an image, or binary to save', () => {
  assert.deepEqual(resourceView([{ uri: 'a', mimeType: 'text/markdown', text: '# A' }]), { kind: 'text', text: '# A', language: 'markdown' });
  // The listed mimeType stands in for an item without one.
  assert.deepEqual(resourceView([{ uri: 'a', text: '{}' }], 'application/json'), { kind: 'text', text: '{}', language: 'json' });
  assert.deepEqual(resourceView([{ uri: 'i', mimeType: 'image/png', blob: 'iVBORw0KGgo=' }]), { kind: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' });
  assert.deepEqual(resourceView([{ uri: 'b', mimeType: 'application/gzip', blob: 'AAAA' }]), { kind: 'binary', data: 'AAAA', mimeType: 'application/gzip' });
  assert.equal(resourceView([{ uri: 'b', blob: 'AAAA' }]).kind, 'binary');
  // A blob of a text type that is UTF-8 is text; one that is not stays binary.
  const b64 = (t: string) => Buffer.from(t).toString('base64');
  assert.deepEqual(resourceView([{ uri: 't', mimeType: 'text/plain', blob: b64('Resource 2: é') }]), { kind: 'text', text: 'Resource 2: é', language: 'plaintext' });
  assert.deepEqual(resourceView([{ uri: 'j', blob: b64('{"a":1}') }], 'application/json'), { kind: 'text', text: '{"a":1}', language: 'json' });
  assert.equal(resourceView([{ uri: 't', mimeType: 'text/plain', blob: Buffer.from([0xff, 0xfe, 0x00]).toString('base64') }]).kind, 'binary');
  assert.equal(resourceView([{ uri: 'p', mimeType: 'application/pdf', blob: b64('%PDF-1.7') }]).kind, 'binary');
  assert.deepEqual(resourceView([]), { kind: 'empty' });
  assert.deepEqual(resourceView(undefined), { kind: 'empty' });
  const several = resourceView([{ uri: 'a', text: 'one' }, { uri: 'b', mimeType: 'image/png', blob: 'AAAA' }]);
  assert.equal(several.kind, 'text');
  assert.match(several.kind === 'text' ? several.text : '', /^--- a\none\n\n--- b \(image\/png\)\n\[binary, 3 bytes\]$/);
});

test('blob sizes, save names and document paths', () => {
  assert.equal(blobBytes('AAAA'), 3);
  assert.equal(blobBytes('AA=='), 1);
  assert.equal(blobBytes('AAA='), 2);
  assert.equal(saveName('demo://resource/session/data.gz', 'application/gzip'), 'data.gz');
  assert.equal(saveName('demo://resource/dynamic/blob/3', 'application/octet-stream'), '3.bin');
  assert.equal(saveName('x://', undefined), 'resource');
  assert.equal(saveName('x://a/..%2F..%2Fetc', undefined), '.._.._etc'.replace(/^\.+/, ''));
  assert.equal(documentPath('everything', 'demo://resource/static/document/features.md'), '/everything/features.md');
  assert.equal(documentPath('my server', 'x://'), '/my_server/resource');
});

test('an argument with suggestions: the typed value first, Leave out for optional ones, required ones insist', () => {
  assert.deepEqual(argumentRows('Pa', ['Paris', 'Pa'], true).map((r) => [r.label, r.value]), [['Pa', 'Pa'], ['Paris', 'Paris']]);
  assert.deepEqual(argumentRows('', ['Engineering'], false).map((r) => [r.label, r.value]), [[LEAVE_OUT, ''], ['Engineering', 'Engineering']]);
  assert.deepEqual(argumentRows('', [], true), []);
  assert.equal(argumentAnswer(undefined, '', true), undefined);
  assert.equal(argumentAnswer(undefined, '  ', true), undefined);
  assert.equal(argumentAnswer('', '', false), '');
  assert.equal(argumentAnswer('Paris', 'Pa', true), 'Paris');
  assert.equal(argumentAnswer(undefined, 'Lyon', true), 'Lyon');
});

test('a prompt as Markdown: role headers, text, images and resources described; its text for inserting', () => {
  const result = {
    description: 'Weather',
    messages: [
      { role: 'user', content: { type: 'text', text: "What's weather in Paris?" } },
      { role: 'assistant', content: { type: 'image', mimeType: 'image/png', data: 'AAAA' } },
      { role: 'user', content: { type: 'resource', resource: { uri: 'demo://r/1', mimeType: 'text/plain', text: 'Resource 1' } } },
    ],
  };
  const md = promptMarkdown('everything', 'args-prompt', { city: 'Paris' }, result);
  assert.match(md, /^# everything: args-prompt\n\nArguments: `city` = `Paris`\n\n_Weather_\n\n## user\n\nWhat's weather in Paris\?\n/);
  assert.match(md, /## assistant\n\n_\[image image\/png, 3 bytes\]_/);
  assert.match(md, /Resource `demo:\/\/r\/1` \(text\/plain\)\n\n```\nResource 1\n```/);
  assert.equal(promptText(result), "What's weather in Paris?\n\nResource 1");
  assert.match(promptMarkdown('s', 'p', {}, {}), /_\(no messages\)_/);
  assert.deepEqual(promptRows([{ server: 'everything', name: 'args-prompt', title: 'Arguments Prompt', description: 'd', arguments: [{ name: 'city', required: true }, { name: 'state' }] }]), [
    { label: 'args-prompt — Arguments Prompt', description: 'everything · (city, state?)', detail: 'd' },
  ]);
});
