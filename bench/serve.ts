// The service for bench/scale.ts, in a process of its own started with the Deployment's Node
// options: the app the server runs (buildApp, the same routes, budget and body limit), with the
// clock of the benchmark's fixture, on 127.0.0.1. It tells its parent its port and stops when
// the parent goes away.
import type { AddressInfo } from 'node:net'
import { buildApp } from '../src/app.js'

const now = new Date(process.env.BENCH_NOW ?? '')
if (Number.isNaN(now.getTime())) throw new Error('BENCH_NOW must be the fixture\'s clock')
const app = await buildApp({ clock: () => now })
await app.listen({ host: '127.0.0.1', port: 0 })
process.on('disconnect', () => { void app.close().then(() => process.exit(0)) })
process.send?.({ port: (app.server.address() as AddressInfo).port })
