/**
 * Run before each test file (Vitest's setupFiles). A worker runs its files in one process with the
 * modules it loaded, so what a file changes in that process must not outlive it: whatever timers it
 * faked are real again after it. Spies are restored and `vi.setConfig` undone by Vitest itself.
 */
import 'reflect-metadata';

afterAll(() => {
  vi.useRealTimers();
});
