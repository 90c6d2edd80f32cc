// The credential check (src/trust/guard.ts), first of all on every hook route: a call that does
// not prove it is Metacontroller's is refused whatever it carries. Registered inside the hook
// routes' context, so that health, readiness and metrics stay open.
import fp from 'fastify-plugin'
import { RefusalLog, type HookGuard, type Refusal } from '../trust/guard.js'

export interface CredentialsOptions {
  /** Who may call the hooks; without one, anyone may (local runs, tests). */
  guard?: HookGuard
}

/**
 * Before the body is read, a refused call is answered 401 and its connection closed rather than
 * its body read on. Refusals are counted, and logged once per source per minute.
 */
export const credentialsPlugin = fp<CredentialsOptions>(async (app, { guard }) => {
  if (guard === undefined) return
  const refusalLog = new RefusalLog()
  const metrics = app.metrics
  app.addHook('onRequest', async (request, reply) => {
    const refusal = guard.check(request.raw)
    if (refusal === undefined) return undefined
    metrics.observeRefusal(refusal)
    const suppressed = refusalLog.due(request.ip)
    if (suppressed !== undefined) {
      // The route, not the URL: a token put in a query string stays out of the log.
      const route = request.routeOptions.url
      const line = { source: request.ip, reason: refusal, route, refusedSinceLastLine: suppressed }
      request.log.warn(line, 'hook call refused: it did not prove it comes from Metacontroller')
    }
    return await reply.code(401).header('www-authenticate', 'Bearer realm="jobhooks"').header('connection', 'close')
      .send({ statusCode: 401, error: 'Unauthorized', message: REFUSAL_MESSAGES[refusal] })
  })
}, { name: 'credentials', dependencies: ['metrics'] })

const REFUSAL_MESSAGES: Readonly<Record<Refusal, string>> = {
  missing_token: 'hook calls must carry Authorization: Bearer <token>',
  wrong_scheme: 'hook calls must carry Authorization: Bearer <token>',
  wrong_token: 'the bearer token is not the one this service accepts',
  no_client_certificate: 'hook calls must present a client certificate signed by the CA this service trusts'
}
