import { RewardServer } from '@rlvr/reward-server';

const server = await RewardServer.start({ port: 0, concurrency: 2, timeoutMs: 2000 }); // bad options throw here
const res = await fetch(`${server.url}/get_reward`, {
  method: 'POST',
  body: JSON.stringify({ query: ['Q: half of 1?\nA: \\boxed{\\frac12}'], prompts: ['Q: half of 1?\n'], labels: ['0.5'] }),
});
console.log(await res.json()); // { rewards: [ 1 ], scores: [ 1 ], extra_logs: { timeout: [ 0 ], no_answer: [ 0 ], prompt_not_found: [ 0 ] } }
await server.close(); // graceful: requests in flight finish first
