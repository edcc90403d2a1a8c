/**
 * An error the chat side raises (our checks, or an upstream's 400 relayed) names a chat field;
 * on the Responses door it must name the field the client wrote.
 */
import { responsesPath } from '../../../src/domain/chat/responses/responses-to-chat';
import { pathOf, spellPath } from '../../../src/domain/errors/field-path';

test.each([
  // messages[i] map back to the input item (or instructions) each came from.
  ['messages[1].content', ['instructions', 'input[0]'], 'input[0].content'],
  ['messages[0].content[2].image_url.url', ['input[3]'], 'input[3].content[2].image_url'],
  ['messages[2].tool_call_id', ['input[0]', 'input[1]', 'input[2]'], 'input[2].call_id'],
  // The output cap under either chat name (the default cap travels as max_tokens on some routes).
  ['max_completion_tokens', [], 'max_output_tokens'],
  ['max_tokens', [], 'max_output_tokens'],
  // A function tool is flat in a Responses request.
  ['tools[0].function.parameters', [], 'tools[0].parameters'],
  ['tools[3].function.name', [], 'tools[3].name'],
  ['response_format.json_schema', [], 'text.format.json_schema'],
  ['temperature', [], 'temperature'],
])('%s (messages from %j) is %s', (chatParam, origins, expected) => {
  expect(spellPath(responsesPath(pathOf(chatParam), origins.map(pathOf)))).toBe(expected);
});
