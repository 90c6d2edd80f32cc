// `kubectl jobhooks ui` as a user starts it, in a process of its own: the URL it prints (its
// origin and the session's token), and its exit once interrupted (Ctrl-C).
import { spawn } from 'node:child_process'

export interface UiProcess {
  /** The whole URL printed, token and all. */
  url: string
  origin: string
  token: string
  /** Ctrl-C, and the exit code it ends with. */
  interrupt: () => Promise<number | null>
}

export async function startUiProcess (
  t: { teardown: (fn: () => unknown) => void }, command: string, args: string[], env?: NodeJS.ProcessEnv
): Promise<UiProcess> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...env !== undefined ? { env } : {} })
  const exited = new Promise<number | null>(resolve => child.once('exit', code => resolve(code)))
  t.teardown(() => child.kill('SIGINT'))
  let printed = ''
  const found = await new Promise<RegExpExecArray>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL printed in 60 s: ${printed}`)), 60_000)
    child.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString('utf8')
      const url = /(http:\/\/127\.0\.0\.1:\d+)\/#token=([\w-]+)/.exec(printed)
      if (url === null) return
      clearTimeout(timer)
      resolve(url)
    })
  })
  return {
    url: found[0],
    origin: found[1] as string,
    token: found[2] as string,
    interrupt: async () => {
      child.kill('SIGINT')
      return await exited
    }
  }
}
