// The proxy taken from the environment, as kubectl (Go's http.ProxyFromEnvironment) takes it.
import t from 'tap'
import { proxyFromEnvironment } from '../../src/kube/proxy-env.js'

const https = new URL('https://api.cluster.example:6443')
const http = new URL('http://api.cluster.example:8080')

t.test('HTTPS_PROXY for an https server, HTTP_PROXY for an http one, the upper-case name first', async t => {
  const env = { HTTPS_PROXY: 'http://proxy:3128', https_proxy: 'http://other:1', HTTP_PROXY: 'http://plain:80' }
  t.equal(proxyFromEnvironment(https, env), 'http://proxy:3128')
  t.equal(proxyFromEnvironment(http, env), 'http://plain:80')
  t.equal(proxyFromEnvironment(https, { https_proxy: 'http://lower:1' }), 'http://lower:1')
  t.equal(proxyFromEnvironment(https, { HTTPS_PROXY: 'proxy.corp:3128' }), 'http://proxy.corp:3128', 'no scheme: http')
  t.equal(proxyFromEnvironment(https, { HTTPS_PROXY: 'socks5://s:1080' }), 'socks5://s:1080')
  t.equal(proxyFromEnvironment(https, { HTTP_PROXY: 'http://plain:80' }), undefined, 'https ignores HTTP_PROXY')
  t.equal(proxyFromEnvironment(https, {}), undefined)
})

t.test('never for localhost or a loopback address', async t => {
  const env = { HTTPS_PROXY: 'http://proxy:3128' }
  for (const server of ['https://localhost:6443', 'https://127.0.0.1', 'https://127.8.9.1', 'https://[::1]:6443']) {
    t.equal(proxyFromEnvironment(new URL(server), env), undefined, server)
  }
})

t.test('NO_PROXY: *, domains and their subdomains, a leading dot, IPs, CIDR blocks, ports', async t => {
  const at = (server: string, noProxy: string): string | undefined =>
    proxyFromEnvironment(new URL(server), { HTTPS_PROXY: 'http://proxy:3128', NO_PROXY: noProxy })
  t.equal(at('https://api.cluster.example', '*'), undefined)
  t.equal(at('https://api.cluster.example', 'cluster.example'), undefined, 'a subdomain')
  t.equal(at('https://cluster.example', 'cluster.example'), undefined, 'the domain itself')
  t.equal(at('https://cluster.example', '.cluster.example'), 'http://proxy:3128', 'a leading dot: subdomains only')
  t.equal(at('https://api.cluster.example', '.cluster.example'), undefined)
  t.equal(at('https://notcluster.example', 'cluster.example'), 'http://proxy:3128', 'not a suffix of a name')
  t.equal(at('https://10.0.0.7:6443', '10.0.0.0/8'), undefined, 'in the block')
  t.equal(at('https://11.0.0.7:6443', '10.0.0.0/8'), 'http://proxy:3128', 'outside the block')
  t.equal(at('https://10.0.0.7:6443', '10.0.0.7'), undefined, 'the address')
  t.equal(at('https://api.cluster.example:6443', 'api.cluster.example:6443'), undefined, 'with its port')
  t.equal(at('https://api.cluster.example:6443', 'api.cluster.example:443'), 'http://proxy:3128', 'another port')
  t.equal(at('https://[fd00::1]:6443', '[fd00::1]:6443'), undefined, 'an IPv6 address with its port')
  t.equal(at('https://api.cluster.example', ' other.example , cluster.example '), undefined, 'a list, spaced')
  t.equal(proxyFromEnvironment(https, { HTTPS_PROXY: 'http://p:1', no_proxy: 'example' }), undefined, 'no_proxy')
})
