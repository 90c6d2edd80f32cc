// What the image tests share: which image (jobhooks:<version>, as npm run image tags it), which
// tool runs it (podman when it works, else docker; IMAGE_TOOL chooses), and running commands
// inside it. The tests build nothing: without the image they fail and say how to build it.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { podmanHostArgs } from './run-args.js'

const run = promisify(execFile)

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
export const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version
export const IMAGE = process.env.IMAGE ?? `jobhooks:${VERSION}`
/** The label scripts/image.sh sets to the base it built on. */
export const BASE_LABEL = 'org.opencontainers.image.base.name'

async function works (tool: string): Promise<boolean> {
  return await run(tool, ['info'], { timeout: 60_000 }).then(() => true, () => false)
}

async function chooseTool (): Promise<'podman' | 'docker'> {
  const chosen = process.env.IMAGE_TOOL
  if (chosen === 'podman' || chosen === 'docker') return chosen
  if (await works('podman')) return 'podman'
  if (await works('docker')) return 'docker'
  throw new Error('neither podman nor docker works here (podman info and docker info fail)')
}

export const TOOL = await chooseTool()

/** Runs the tool; rejects with its standard error when it fails. */
export async function tool (args: string[], timeoutMs = 120_000): Promise<{ stdout: string, stderr: string }> {
  return await run(TOOL, args, { timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 })
}

export interface ImageFacts {
  Size: number
  Config: { User?: string, Labels?: Record<string, string> | null, Env?: string[] }
}

/** `image inspect`, or undefined when there is no such image. */
export async function inspectImage (reference: string): Promise<ImageFacts | undefined> {
  try {
    const { stdout } = await tool(['image', 'inspect', reference])
    return (JSON.parse(stdout) as ImageFacts[])[0]
  } catch {
    return undefined
  }
}

export const MISSING_IMAGE = `there is no image ${IMAGE} for ${TOOL}: build it first with npm run image`

/** The arguments `run` needs on this host (podman: runc and ulimits). */
export function hostArgs (): string[] {
  return TOOL === 'podman' ? podmanHostArgs() : []
}

/** Runs `command args…` in a throwaway container of the image, as the image's user, and returns what it printed. */
export async function inImage (command: string, args: string[]): Promise<string> {
  const { stdout } = await tool([
    'run',
    '--rm',
    ...hostArgs(),
    '--network=none',
    '--entrypoint',
    command,
    IMAGE,
    ...args
  ])
  return stdout
}
