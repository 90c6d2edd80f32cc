// Safe by default: where the service could act on a cluster, it does not serve hooks that anyone
// can call, unless told so on purpose.

export interface TrustDecision {
  /** Ask hook calls for credentials (token, client certificate, or both). */
  guarded: boolean
  /** A warning for the start-up log, when the service runs without a check on purpose. */
  warning?: string
}

/**
 * With cluster credentials (the service applies effects), hook calls must prove they are
 * Metacontroller's: AUTH_TOKEN_FILE or TLS_CLIENT_CA_FILE, or AUTH=none said on purpose. Without
 * credentials (a local run) effects are only recorded, and the service serves as it is.
 */
/** The settings (src/config.ts) the decision reads. */
export interface TrustSettings {
  auth: 'required' | 'none'
  authTokenFile?: string
  tlsClientCaFile?: string
}

export function decideTrust (config: TrustSettings, clusterCredentials: boolean): TrustDecision {
  const checked = config.authTokenFile !== undefined || config.tlsClientCaFile !== undefined
  if (config.auth === 'none') {
    if (checked) {
      throw new Error('AUTH=none turns the credential check off, ' +
        'but AUTH_TOKEN_FILE or TLS_CLIENT_CA_FILE asks for one: set one or the other')
    }
    return {
      guarded: false,
      warning: clusterCredentials
        ? 'AUTH=none: anything that reaches this service can make it apply effects ' +
          '(inject containers, evict and label Pods) in any namespace'
        : 'AUTH=none: hook calls are not authenticated'
    }
  }
  if (checked) return { guarded: true }
  if (clusterCredentials) {
    throw new Error('refusing to start: with cluster credentials the service applies effects, ' +
      'so hook calls must prove they come from Metacontroller. ' +
      'Set AUTH_TOKEN_FILE (the Secret the CompositeControllers send as authorization) ' +
      'or TLS_CLIENT_CA_FILE (mutual TLS), or AUTH=none to serve without a check on purpose')
  }
  return { guarded: false }
}
