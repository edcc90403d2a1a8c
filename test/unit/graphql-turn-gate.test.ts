import { TurnGate } from '../../src/graphql/turn-gate';

const turn = () => new Promise<void>((r) => setImmediate(r));

test('admits perTurn per event-loop turn, the rest in later turns in arrival order', async () => {
  const gate = new TurnGate(10);
  const order: number[] = [];
  const all = Array.from({ length: 25 }, (_, i) => gate.pass().then(() => order.push(i)));
  await Promise.resolve();
  expect(order).toEqual(Array.from({ length: 10 }, (_, i) => i));
  await turn();
  expect(order).toHaveLength(20);
  await turn();
  expect(order).toHaveLength(25);
  await Promise.all(all);
  expect(order).toEqual(Array.from({ length: 25 }, (_, i) => i));
});

test('a turn with room admits at once; the count starts again every turn', async () => {
  const gate = new TurnGate(1);
  let passed = 0;
  await gate.pass().then(() => passed++);
  const second = gate.pass().then(() => passed++);
  await Promise.resolve();
  expect(passed).toBe(1);
  await second;
  await turn();
  await gate.pass();
  expect(passed).toBe(2);
});
