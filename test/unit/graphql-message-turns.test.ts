/**
 * WebSocket messages beyond a turn's share wait for later turns, in arrival order, so a burst of
 * thousands (every client subscribing at once) does not hold the event loop in one go.
 */
import { EventEmitter } from 'node:events';
import type { WebSocket } from 'ws';
import { messagesThroughGate } from '../../src/graphql/message-turns';
import { TurnGate } from '../../src/graphql/turn-gate';

function socket(log: string[], name: string) {
  const s = Object.assign(new EventEmitter(), { OPEN: 1, readyState: 1 });
  s.on('message', (m: string) => log.push(`${name}:${m}`));
  return s;
}

const nextTurn = () => new Promise((r) => setImmediate(r));
/** After the microtasks queued so far (a message let through runs in one). */
const microtasksDone = () => new Promise((r) => process.nextTick(r));

/** Two sockets whose messages go through one gate of `perTurn`. */
function twoSockets(perTurn: number) {
  const log: string[] = [];
  const gate = new TurnGate(perTurn);
  const a = socket(log, 'a');
  const b = socket(log, 'b');
  messagesThroughGate(gate, a as unknown as WebSocket);
  messagesThroughGate(gate, b as unknown as WebSocket);
  return { log, a, b };
}

test('a turn handles its share at once, the rest in later turns, each socket in order', async () => {
  const { log, a, b } = twoSockets(3);
  for (let i = 1; i <= 4; i++) {
    a.emit('message', `${i}`);
    b.emit('message', `${i}`);
  }
  // The first three go through in the burst's own turn.
  await microtasksDone();
  expect(log).toEqual(['a:1', 'b:1', 'a:2']);
  await nextTurn();
  expect(log).toEqual(['a:1', 'b:1', 'a:2', 'b:2', 'a:3', 'b:3']);
  await nextTurn();
  expect(log).toEqual(['a:1', 'b:1', 'a:2', 'b:2', 'a:3', 'b:3', 'a:4', 'b:4']);
  // Other events are never held.
  a.on('close', () => log.push('a:closed'));
  a.emit('close');
  expect(log.at(-1)).toBe('a:closed');
});

test("a socket closed while its messages waited has them dropped; others' still go", async () => {
  const { log, a, b } = twoSockets(1);
  a.emit('message', '1');
  a.emit('message', '2');
  b.emit('message', '1');
  await microtasksDone();
  a.readyState = 3;
  await nextTurn();
  await nextTurn();
  expect(log).toEqual(['a:1', 'b:1']);
});
