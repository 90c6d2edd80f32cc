// The processes of the end-to-end tier: commands run to completion, long-running ones in process
// groups of their own (stopped by PID, never by name), polls, probes and free ports on 127.0.0.1.
import { spawn, type ChildProcess } from 'node:child_process'
import { createWriteStream } from 'node:fs'
import { get as httpGet } from 'node:http'
import { get as httpsGet } from 'node:https'
import { createServer } from 'node:net'
import { join } from 'node:path'

export interface Result {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs a command to completion, collecting its output. */
export async function run (
  command: string,
  args: string[],
  options: { input?: string; env?: NodeJS.ProcessEnv } = {}
): Promise<Result> {
  return await new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk) => {
      stdout += String(chunk)
    })
    child.stderr.on('data', (chunk) => {
      stderr += String(chunk)
    })
    child.on('error', reject)
    // A command that exits before reading its input (kubectl failing early) closes the pipe: the
    // exit code and stderr say what happened, so EPIPE on the write is no error of its own.
    child.stdin.on('error', () => {})
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(options.input ?? '')
  })
}

/** Polls `probe` until it returns a value, or fails naming `what` after `timeoutMs`. */
export async function waitFor<T> (
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 60_000,
  everyMs = 500
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      const value = await probe()
      if (value !== undefined) return value
    } catch (error) {
      lastError = error
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs / 1000}s waiting for ` +
          `${what}${lastError instanceof Error ? `: ${lastError.message}` : ''}`
      )
    }
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}

/** The status of a GET of `url`; over HTTPS without checking the certificate, as the kubelet probes. */
export async function probeStatus (url: string): Promise<number> {
  return await new Promise((resolve, reject) => {
    const done = (response: { statusCode?: number; resume: () => void }): void => {
      response.resume()
      resolve(response.statusCode ?? 0)
    }
    const request = url.startsWith('https:') ? httpsGet(url, { rejectUnauthorized: false }, done) : httpGet(url, done)
    request.on('error', reject)
    request.setTimeout(2_000, () => request.destroy(new Error(`GET ${url} timed out`)))
  })
}

export async function freePort (): Promise<number> {
  return await new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      const port = typeof address === 'object' && address !== null ? address.port : 0
      server.close(() => resolve(port))
    })
  })
}

/** A long-running process in its own process group, its output in a log file. */
export class Process {
  readonly child: ChildProcess
  private exited: Promise<void>

  constructor (
    readonly name: string,
    command: string,
    args: string[],
    logDir: string,
    env: NodeJS.ProcessEnv = process.env
  ) {
    const log = createWriteStream(join(logDir, `${name}.log`))
    this.child = spawn(command, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
    this.child.stdout?.pipe(log)
    this.child.stderr?.pipe(log)
    this.exited = new Promise((resolve) => this.child.once('exit', () => resolve()))
    this.child.once('error', (error) => log.write(`spawn failed: ${error.message}\n`))
  }

  get running (): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }

  /** SIGTERM to the process group, SIGKILL after five seconds. */
  async stop (): Promise<void> {
    const pid = this.child.pid
    if (pid === undefined || !this.running) return
    signal(pid, 'SIGTERM')
    const killed = setTimeout(() => signal(pid, 'SIGKILL'), 5_000)
    await this.exited
    clearTimeout(killed)
  }

  /** SIGKILL to the process group, and wait until it is gone. */
  async killNow (): Promise<void> {
    this.kill()
    await this.exited
  }

  /** Resolves once the process has exited (by itself, or as another command ended it). */
  async exit (): Promise<void> {
    await this.exited
  }

  /** For exit handlers, which cannot wait. */
  kill (): void {
    if (this.child.pid !== undefined && this.running) signal(this.child.pid, 'SIGKILL')
  }
}

export function signal (pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(-pid, name)
  } catch {
    // Already gone.
  }
}
