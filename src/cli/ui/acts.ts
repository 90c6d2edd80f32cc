// The page's writes: each is the plugin's own command (rerun, suspend, resume, approve) run for
// the user through the same client, so the patch is the one `kubectl jobhooks` sends and a refusal
// reads as it prints it.
import { Type, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { approveCommand } from '../kubectl/approve.js'
import { errorCode, KubeError } from '../kubectl/client.js'
import { kindNamed } from '../kubectl/kinds.js'
import { parseOptions } from '../kubectl/options.js'
import type { Session } from '../kubectl/session.js'
import { rerunCommand, suspendCommand } from '../kubectl/steer.js'

/** A Kubernetes name, a step's name: never a flag, never a path. */
export const NAME = Type.String({ pattern: '^[A-Za-z0-9]([A-Za-z0-9._-]{0,252})$' })

export const ActSchema = Type.Object({
  action: Type.Union([Type.Literal('rerun'), Type.Literal('suspend'), Type.Literal('resume'), Type.Literal('approve')]),
  kind: Type.String({ maxLength: 64 }),
  namespace: NAME,
  name: NAME,
  steps: Type.Optional(Type.Array(NAME, { maxItems: 100 }))
}, { additionalProperties: false })
export type ActRequest = Static<typeof ActSchema>

export interface ActAnswer { status: number, message: string }

/** The plugin's command line for the request: `rerun jf <name> --step S -n NS`, `approve jf <name> S…`. */
function commandLine (request: ActRequest, plural: string): string[] {
  const steps = request.steps ?? []
  return [request.action, plural, request.name,
    ...request.action === 'approve' ? steps : [],
    ...request.action === 'rerun' && steps.length > 0 ? ['--step', steps.join(',')] : [],
    '-n', request.namespace]
}

export async function act (base: Session, body: unknown): Promise<ActAnswer> {
  if (!Value.Check(ActSchema, body)) {
    const first = [...Value.Errors(ActSchema, body)][0]
    return { status: 400, message: `error: ${first?.path ?? ''} ${first?.message ?? 'not an action'}`.trim() }
  }
  const kind = kindNamed(body.kind)
  if (kind === undefined) {
    return { status: 400, message: `error: the server doesn't have a resource type "${body.kind}"` }
  }
  let out = ''
  const session: Session = {
    ...base,
    namespace: body.namespace,
    options: parseOptions(commandLine(body, kind.plural)),
    io: { ...base.io, out: text => { out += text } }
  }
  try {
    if (body.action === 'rerun') await rerunCommand(session)
    else if (body.action === 'approve') await approveCommand(session)
    else await suspendCommand(session, body.action === 'suspend')
  } catch (error) {
    // The API server's code where it answered (403: RBAC), else 409: the object refused the action.
    if (error instanceof KubeError) return { status: errorCode(error) ?? 409, message: error.message }
    throw error
  }
  return { status: 200, message: out.trim() }
}
