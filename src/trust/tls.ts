// HTTPS for the hooks: the certificate and key (a cert-manager Secret, say), and for mutual TLS
// the CA that signs Metacontroller's client certificate, all re-read when the Secret changes.
import { createSecureContext, type SecureContextOptions } from 'node:tls'
import type { Server as HttpsServer, ServerOptions } from 'node:https'
import { watchFiles, type WatchedFiles } from './watched-file.js'

export interface TlsFiles {
  certFile: string
  keyFile: string
  clientCaFile?: string
}

export interface ServedTls {
  /** Options for the HTTPS server fastify creates. */
  options: ServerOptions
  /** Starts reloading the files into `server` as they change. */
  watch: (
    server: HttpsServer,
    reloadMs: number,
    log: { info: (msg: string) => void; error: (msg: string) => void }
  ) => WatchedFiles<SecureContextOptions>
}

function parse (files: TlsFiles) {
  return ([cert, key, ca]: readonly Buffer[]): SecureContextOptions => {
    const context: SecureContextOptions = { cert, key }
    if (files.clientCaFile !== undefined) context.ca = ca
    // Throws on a key that does not match the certificate, or PEM that is not one: such files
    // are refused here instead of breaking every new connection.
    createSecureContext(context)
    return context
  }
}

/** Reads the TLS files (unreadable ones are a start-up error). */
export function loadTls (files: TlsFiles): ServedTls {
  const paths = [files.certFile, files.keyFile, ...(files.clientCaFile !== undefined ? [files.clientCaFile] : [])]
  const first = watchFiles({ files: paths, parse: parse(files), intervalMs: 0 })
  const options: ServerOptions = {
    ...first.current,
    // A client certificate is asked for but not required by the handshake: the kubelet's probes
    // have none. The hook routes refuse a call whose certificate did not verify (guard.ts).
    ...(files.clientCaFile !== undefined ? { requestCert: true, rejectUnauthorized: false } : {})
  }
  return {
    options,
    watch: (server, reloadMs, log) => watchFiles({
      files: paths,
      parse: parse(files),
      intervalMs: reloadMs,
      onChange: context => {
        server.setSecureContext(context)
        log.info(`TLS files changed: new connections use them (${paths.join(', ')})`)
      },
      onError: error => log.error(`cannot reload the TLS files, the previous ones stay in force: ${error.message}`)
    })
  }
}
