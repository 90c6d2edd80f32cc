import t from 'tap'
import { testApp } from './helpers/app.js'

t.test('health, readiness and metrics answer', async t => {
  const app = await testApp(t)
  t.same((await app.inject({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' })
  t.same((await app.inject({ method: 'GET', url: '/readyz' })).json(), { status: 'ready' })
  const metrics = await app.inject({ method: 'GET', url: '/metrics' })
  t.equal(metrics.statusCode, 200)
  t.match(metrics.headers['content-type'], /text\/plain/)
})
