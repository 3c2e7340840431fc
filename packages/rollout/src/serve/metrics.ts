/**
 * `/metrics` in the Prometheus text format (0.0.4), under vLLM's metric names where vLLM has one,
 * so dashboards written for vLLM read `rlvr-serve` too: requests running and waiting (the queue),
 * prompt and generation tokens, finished requests by reason, end-to-end latency, and HTTP
 * responses by route and status.
 */
import type { QueueStats } from '../samplers/decode-queue.js';

const LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80, 160, 320, 640];

const label = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

export class ServerMetrics {
  private promptTokens = 0;
  private generationTokens = 0;
  private readonly finished = new Map<string, number>();
  private readonly http = new Map<string, number>();
  private readonly latency = new Array<number>(LATENCY_BUCKETS.length).fill(0);
  private latencySum = 0;
  private latencyCount = 0;

  constructor(private readonly model: string) {}

  /** A generation request ended: its tokens, and one finish reason per completion. */
  finish(promptTokens: number, generationTokens: number, reasons: readonly string[]): void {
    this.promptTokens += promptTokens;
    this.generationTokens += generationTokens;
    for (const r of reasons) this.finished.set(r, (this.finished.get(r) ?? 0) + 1);
  }

  /** An HTTP response went out (`seconds` from the request's arrival, for generation routes). */
  response(route: string, status: number, seconds?: number): void {
    const key = `${route}\u0000${status}`;
    this.http.set(key, (this.http.get(key) ?? 0) + 1);
    if (seconds === undefined) return;
    this.latencySum += seconds;
    this.latencyCount++;
    LATENCY_BUCKETS.forEach((le, i) => {
      if (seconds <= le) this.latency[i]!++;
    });
  }

  /** `textPending`: request bodies in the text thread, waiting or being read */
  render(queue: QueueStats, textPending = 0): string {
    const m = `model_name="${label(this.model)}"`;
    const lines: string[] = [];
    const metric = (name: string, type: string, help: string, samples: [string, number][]): void => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, v] of samples) lines.push(`${name}{${labels}} ${v}`);
    };
    metric('vllm:num_requests_running', 'gauge', 'Requests with a completion in the decode batch.', [[m, queue.runningRequests]]);
    metric('vllm:num_requests_waiting', 'gauge', 'Requests waiting for room in the decode batch (the queue length).', [
      [m, queue.waitingRequests],
    ]);
    metric('rlvr:num_sequences_running', 'gauge', 'Completions (rows) in the decode batch.', [[m, queue.runningRows]]);
    metric('rlvr:num_sequences_waiting', 'gauge', 'Completions (rows) waiting for room in the decode batch.', [[m, queue.waitingRows]]);
    metric('rlvr:text_thread_pending', 'gauge', 'Request bodies in the text thread (parsing, templating, tokenizing).', [[m, textPending]]);
    metric('vllm:prompt_tokens_total', 'counter', 'Prompt tokens of finished requests.', [[m, this.promptTokens]]);
    metric('vllm:generation_tokens_total', 'counter', 'Generated tokens of finished requests.', [[m, this.generationTokens]]);
    metric(
      'vllm:request_success_total',
      'counter',
      'Finished completions by finish reason.',
      [...this.finished].sort().map(([r, n]) => [`finished_reason="${label(r)}",${m}`, n]),
    );
    lines.push(
      '# HELP vllm:e2e_request_latency_seconds Seconds from the arrival of a generation request to its last byte.',
      '# TYPE vllm:e2e_request_latency_seconds histogram',
    );
    LATENCY_BUCKETS.forEach((le, i) => lines.push(`vllm:e2e_request_latency_seconds_bucket{le="${le}",${m}} ${this.latency[i]}`));
    lines.push(`vllm:e2e_request_latency_seconds_bucket{le="+Inf",${m}} ${this.latencyCount}`);
    lines.push(
      `vllm:e2e_request_latency_seconds_sum{${m}} ${this.latencySum}`,
      `vllm:e2e_request_latency_seconds_count{${m}} ${this.latencyCount}`,
    );
    metric(
      'rlvr:http_requests_total',
      'counter',
      'HTTP responses by route and status.',
      [...this.http].sort().map(([key, n]) => {
        const [route, status] = key.split('\u0000');
        return [`route="${label(route!)}",status="${status}"`, n];
      }),
    );
    return lines.join('\n') + '\n';
  }
}
