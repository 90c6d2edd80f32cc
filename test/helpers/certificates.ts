// Certificates for the TLS tests, made on the spot with node-forge: a CA, a server certificate
// for 127.0.0.1 and client certificates, signed by that CA or by another one.
import forge from 'node-forge'

export interface Pem {
  cert: string
  key: string
}

export interface Authority extends Pem {
  /** A certificate signed by this CA: a server's (for 127.0.0.1) or a client's. */
  issue: (commonName: string, use: 'server' | 'client') => Pem
}

let serial = 1

function certificate (commonName: string, publicKey: forge.pki.PublicKey, extensions: object[]): forge.pki.Certificate {
  const cert = forge.pki.createCertificate()
  cert.publicKey = publicKey
  cert.serialNumber = (serial++).toString(16).padStart(2, '0')
  cert.validity.notBefore = new Date(Date.now() - 60_000)
  cert.validity.notAfter = new Date(Date.now() + 24 * 3600_000)
  cert.setSubject([{ name: 'commonName', value: commonName }])
  cert.setExtensions(extensions)
  return cert
}

export function authority (commonName = 'test CA'): Authority {
  const keys = forge.pki.rsa.generateKeyPair(2048)
  const ca = certificate(commonName, keys.publicKey, [
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true }
  ])
  ca.setIssuer(ca.subject.attributes)
  ca.sign(keys.privateKey, forge.md.sha256.create())
  return {
    cert: forge.pki.certificateToPem(ca),
    key: forge.pki.privateKeyToPem(keys.privateKey),
    issue (name, use) {
      const leafKeys = forge.pki.rsa.generateKeyPair(2048)
      const leaf = certificate(name, leafKeys.publicKey, [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', serverAuth: use === 'server', clientAuth: use === 'client' },
        ...(use === 'server' ? [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }] : [])
      ])
      leaf.setIssuer(ca.subject.attributes)
      leaf.sign(keys.privateKey, forge.md.sha256.create())
      return { cert: forge.pki.certificateToPem(leaf), key: forge.pki.privateKeyToPem(leafKeys.privateKey) }
    }
  }
}
