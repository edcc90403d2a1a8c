import type { ChatCallInfo } from '../../../src/domain/chat/chat-service';
import type { ChoiceDelta } from '../../../src/domain/chat/chat-port';
import { chunkBody, chunkPrefix, chunkText } from '../../../src/rest/routes/chat-wire';

const info = (id: string, model: string, created: number) => ({ id, model, created, includeUsage: true, choiceCount: 2, headers: {} }) as ChatCallInfo;

test('a chunk written from its prefix is the same text as the whole chunk serialised', () => {
  const choices: ChoiceDelta[][] = [
    [{ index: 0, delta: { role: 'assistant', content: '' }, finishReason: null }],
    [{ index: 0, delta: { content: 'héllo "quoted" \\ \n\u2028 😀' }, finishReason: null }],
    [
      { index: 0, delta: { tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] }, finishReason: null },
      { index: 1, delta: {}, finishReason: 'stop', logprobs: { content: [] } },
    ],
    [],
  ];
  // Ids and models that need escaping must come out escaped, as JSON.stringify would.
  for (const call of [info('chatcmpl-abc', 'svc-chat-1', 1_767_225_600), info('chatcmpl-"\\', 'model\u2028"x"', 0)]) {
    // With and without what the provider said about its backend (a fingerprint needing escaping too).
    for (const stamp of [undefined, { systemFingerprint: 'fp_"1\u2028' }, { systemFingerprint: 'fp_2', serviceTier: 'flex' }]) {
      const prefix = chunkPrefix(call, stamp);
      for (const c of choices) {
        const text = chunkText(prefix, c);
        expect(text).toBe(JSON.stringify(chunkBody(call, c, stamp)));
        expect(JSON.parse(text)).toEqual(chunkBody(call, c, stamp));
      }
    }
  }
});
