// The part of autocannon 9's programmatic API the benchmark uses (the package ships no types).
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string
      method?: string
      headers?: Record<string, string>
      body?: string | Buffer
      connections?: number
      pipelining?: number
      /** Seconds. */
      duration?: number
      amount?: number
      /** Seconds before a request counts as timed out. */
      timeout?: number
      /** Worker threads that send the requests (the main thread only collects results). */
      workers?: number
      /** Milliseconds between samples; a run ends at the first sample after its last answer. */
      sampleInt?: number
      title?: string
    }

    interface Histogram {
      average: number
      mean: number
      stddev: number
      min: number
      max: number
      total: number
      p50: number
      p90: number
      p99: number
      [percentile: string]: number | undefined
    }

    interface Result {
      title?: string
      url: string
      connections: number
      pipelining: number
      /** Seconds. */
      duration: number
      errors: number
      timeouts: number
      non2xx: number
      resets: number
      statusCodeStats: Record<string, { count: number }>
      /** Milliseconds; `totalCount` is the number of latencies recorded. */
      latency: Histogram & { totalCount?: number }
      /** Per second; `total` is the number of completed requests. */
      requests: Histogram & { sent: number }
      throughput: Histogram
    }
  }

  function autocannon (options: autocannon.Options): Promise<autocannon.Result>
  export = autocannon
}
