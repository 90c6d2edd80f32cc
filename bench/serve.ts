// The service for bench/scale.ts, in a process of its own started with the Deployment's Node
// options: the app the server runs (buildApp, the same routes, budget, body limit and hook thread), with the
// clock of the benchmark's fixture, on 127.0.0.1. It tells its parent its port and stops when
// the parent goes away.
import type { AddressInfo } from 'node:net'
import { buildApp } from '../src/app.js'

const now = new Date(process.env.BENCH_NOW ?? '')
if (Number.isNaN(now.getTime())) throw new Error('BENCH_NOW must be the fixture\'s clock')
// As the server runs it (src/server.ts): the hooks on a thread of their own, unless HOOK_THREAD=0.
const thread = process.env.HOOK_THREAD === '0' ? {} : { thread: { now } }
const app = await buildApp({ clock: () => now, ...thread })
await app.listen({ host: '127.0.0.1', port: 0 })
process.on('disconnect', () => { void app.close().then(() => process.exit(0)) })
process.send?.({ port: (app.server.address() as AddressInfo).port })
