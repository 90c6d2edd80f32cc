// CollaSet against the real thing: the API server with our CRD, Metacontroller creating and
// deleting the Pods our sync hook asks for, the scheduler placing them on the kwok node, and the
// service's executor writing the readiness-gate condition through the pods/status subresource.
// kwok plays the kubelet, and like a kubelet it keeps a Pod that has readiness gates out of Ready
// until every gate's condition is True (test/e2e/kwok-stages.yaml). Everything asserted is read
// back from the API server.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseAllDocuments, stringify } from 'yaml'
import { apply, ROOT, waitFor } from './cluster.js'
import { isLive, isPodReady, podCondition, sampleReadyPods, startScenarios, watchObjects } from './scenario.js'

const { cluster, namespace, getJson } = await startScenarios(t)

const GATE = 'jobhooks.io/service-ready'

/** The CollaSet `foo` of manifests/examples/collaset.yaml. */
function example (): any {
  return parseAllDocuments(readFileSync(join(ROOT, 'manifests', 'examples', 'collaset.yaml'), 'utf8'))
    .map((d) => d.toJS())
    .find((d) => d?.kind === 'CollaSet')
}

const condition = podCondition
const isReady = isPodReady
const live = isLive

async function pods (ns: string): Promise<any[]> {
  return (await getJson(['get', 'pods', '-n', ns, '-l', 'app=foo'])).items
}

async function podExists (ns: string, name: string): Promise<boolean> {
  const result = await cluster.kubectl(['get', 'pod', name, '-n', ns, '-o', 'name'])
  if (result.code === 0) return true
  if (/NotFound/.test(result.stderr)) return false
  throw new Error(result.stderr)
}

/**
 * Whether the service's executor wrote the gate's condition through pods/status: the API server
 * records the `jobhooks` field manager (its User-Agent) owning that condition in the status subresource.
 */
async function statusWrittenByService (ns: string, name: string): Promise<boolean> {
  const pod = await getJson(['get', 'pod', name, '-n', ns, '--show-managed-fields'])
  return (pod.metadata.managedFields ?? []).some(
    (m: any) =>
      m.manager === 'jobhooks' &&
      m.subresource === 'status' &&
      Object.keys(m.fieldsV1?.['f:status']?.['f:conditions'] ?? {}).includes(`k:{"type":"${GATE}"}`)
  )
}

const TABLE =
  new RegExp(
    String.raw`^NAME\s+DESIRED\s+CURRENT\s+AVAILABLE\s+UPDATED\s+UPDATED_READY\s+UPDATED_AVAILABLE\s+` +
    String.raw`CURRENT_REVISION\s+UPDATED_REVISION\s+AGE\s*\n` +
    String.raw`foo\s+2\s+2\s+2\s+2\s+2\s+2\s+(foo-[0-9a-f]{10})\s+(foo-[0-9a-f]{10})\s+\S+\s*$`
  )

t.test(
  'CollaSet foo: two gated Pods become Ready, and a replace request brings a new Pod up before the old one goes',
  async (t) => {
    const ns = await namespace('collaset')
    await apply(cluster.kubectl, stringify(example()), ns)

    const first = await waitFor(
      'two Ready Pods of foo',
      async () => {
        const list = (await pods(ns)).filter(live)
        return list.length === 2 && list.every(isReady) ? list : undefined
      },
      90_000,
      500
    )
    const revision = first[0].metadata.labels['jobhooks.io/revision']
    for (const pod of first) {
      const name = pod.metadata.name
      t.match(name, /^foo-[a-z0-9]{5}$/, `${name}: foo-<5 letters or digits>`)
      t.same(pod.spec.readinessGates, [{ conditionType: GATE }], `${name} carries the readiness gate`)
      t.match(
        condition(pod, GATE),
        { status: 'True', reason: 'ContainersReady' },
        `${name}: the service set ${GATE} True`
      )
      t.ok(
        await statusWrittenByService(ns, name),
        `${name}: the condition was written by the jobhooks executor through pods/status`
      )
      t.equal(condition(pod, 'Ready')?.status, 'True', `${name} is Ready`)
      t.equal(pod.metadata.labels['jobhooks.io/revision'], revision, `${name} runs the template's revision`)
      t.match(
        pod.metadata.ownerReferences,
        [{ kind: 'CollaSet', name: 'foo', controller: true }],
        `${name} is owned by the CollaSet`
      )
    }

    await waitFor(
      'the CollaSet status to count two available Pods',
      async () => {
        const cls = await getJson(['get', 'collaset', 'foo', '-n', ns])
        return cls.status?.availableReplicas === 2 && cls.status?.updatedAvailableReplicas === 2 ? cls : undefined
      },
      60_000,
      500
    )
    const table = await cluster.kubectl(['get', 'cls', 'foo', '-n', ns])
    t.match(table.stdout, TABLE, 'kubectl get cls shows the columns of the CRD')
    const [, current, updated] = TABLE.exec(table.stdout) ?? []
    t.equal(current, revision, "CURRENT_REVISION is the Pods' revision")
    t.equal(updated, revision, 'UPDATED_REVISION is the same (no rollout)')

    const names: string[] = first.map((p) => p.metadata.name).sort()
    const old = names[0] as string
    const other = names[1] as string
    const watch = sampleReadyPods(getJson, ns, 'app=foo')
    t.teardown(async () => {
      await watch.stop()
    })
    await watch.started
    // Every change to foo's Pods, from a watch: with kwok a replacement is Ready at once and the
    // old Pod can go within a poll's round trip, so only the API server's order of events shows
    // which came first.
    const changes = watchObjects(
      cluster,
      ['pods', '-n', ns, '-l', 'app=foo'],
      ['.metadata.name', '.status.conditions[?(@.type=="Ready")].status', '.metadata.deletionTimestamp']
    )
    t.teardown(async () => {
      await changes.stop()
    })
    await changes.started

    const labelled = await cluster.kubectl(['label', 'pod', old, '-n', ns, 'jobhooks.io/to-replace=true'])
    t.equal(labelled.code, 0, `kubectl label pod ${old} jobhooks.io/to-replace=true: ${labelled.stderr}`)

    const replacement = await waitFor(
      `a replacement for ${old}`,
      async () => {
        return (await pods(ns)).find((p) => p.metadata.labels?.['jobhooks.io/replace-origin'] === old)
      },
      60_000,
      300
    )
    const fresh = replacement.metadata.name as string
    t.match(fresh, /^foo-[a-z0-9]{5}$/, `the replacement ${fresh} is named like the others`)
    t.not(fresh, old)
    t.not(fresh, other)
    t.same(replacement.spec.readinessGates, [{ conditionType: GATE }], 'the replacement carries the gate')

    const ready = await waitFor(
      `${fresh} Ready`,
      async () => {
        const list = await pods(ns)
        return list.find((p) => p.metadata.name === fresh && isReady(p))
      },
      60_000,
      300
    )
    t.match(condition(ready, GATE), { status: 'True' }, `${fresh}: ${GATE} True`)
    t.ok(await statusWrittenByService(ns, fresh), `${fresh}: the condition was written by the jobhooks executor`)

    await waitFor(`${old} to be gone`, async () => ((await podExists(ns, old)) ? undefined : true), 60_000, 300)
    const after = await waitFor(
      'two Ready Pods again',
      async () => {
        const list = await pods(ns)
        return list.length === 2 && list.every((p) => live(p) && isReady(p)) ? list : undefined
      },
      60_000,
      300
    )
    t.same(after.map((p) => p.metadata.name).sort(), [fresh, other].sort(), `the Pods are ${other} and ${fresh}`)

    const events = await changes.stop()
    const freshReady = events.findIndex((e) => e.fields[0] === fresh && e.fields[1] === 'True')
    const oldGoing = events.findIndex(
      (e) => e.fields[0] === old && (e.type === 'DELETED' || (e.fields[2] ?? '') !== '')
    )
    t.comment(
      'foo\'s Pods, every change ' +
        `(name|Ready|deletionTimestamp):\n${events.map((e) => `${e.type} ${e.fields.join('|')}`).join('\n')}`
    )
    t.ok(freshReady >= 0 && oldGoing > freshReady, `${fresh} was Ready before ${old} started to go`)
    const seen = await watch.stop()
    t.ok(seen.samples >= 2, `the Ready Pods were sampled while the replacement ran (${seen.samples} samples)`)
    t.ok(seen.fewest >= 2, `never fewer than 2 Ready Pods meanwhile (fewest seen: ${seen.fewest})`)
    t.comment(`Ready Pods as sampled:\n${seen.log.join('\n')}`)

    await waitFor(
      'the CollaSet status to settle on two available Pods',
      async () => {
        const cls = await getJson(['get', 'collaset', 'foo', '-n', ns])
        return cls.status?.replicas === 2 && cls.status?.availableReplicas === 2 ? cls : undefined
      },
      60_000,
      500
    )
    const final = await cluster.kubectl(['get', 'cls', 'foo', '-n', ns])
    t.match(final.stdout, TABLE, 'kubectl get cls shows 2 Pods of the same revision again')
  }
)

t.test(
  'an image change at partition 1 of 3: two Pods updated in place (names and UIDs kept), never fewer than 2 Ready',
  async (t) => {
    const ns = await namespace('collaset-in-place')
    const foo = example()
    foo.spec.replicas = 3
    foo.spec.updateStrategy = { rollingUpdate: { byPartition: { partition: 1 } } }
    await apply(cluster.kubectl, stringify(foo), ns)
    const first = await waitFor('three Ready Pods of foo', async () => {
      const list = (await pods(ns)).filter(live)
      return list.length === 3 && list.every(isReady) ? list : undefined
    }, 90_000, 500)
    const identities = first.map((p) => `${p.metadata.name}/${p.metadata.uid}`).sort()
    const oldRevision = first[0].metadata.labels['jobhooks.io/revision']
    for (const pod of first) {
      t.ok(pod.metadata.annotations?.['jobhooks.io/template-shape'], `${pod.metadata.name} carries its shape`)
    }

    const watch = sampleReadyPods(getJson, ns, 'app=foo')
    t.teardown(async () => { await watch.stop() })
    await watch.started
    const image = [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'nginx:1.28' }]
    const patched = await cluster.kubectl(
      ['patch', 'collaset', 'foo', '-n', ns, '--type', 'json', '-p', JSON.stringify(image)]
    )
    t.equal(patched.code, 0, `kubectl patch the image: ${patched.stderr}`)

    const done = await waitFor('two Pods updated and Ready, the CollaSet Partitioned', async () => {
      const cls = await getJson(['get', 'collaset', 'foo', '-n', ns])
      const update = (cls.status?.conditions ?? []).find((c: any) => c.type === 'Update')
      const counts = cls.status?.updatedReadyReplicas === 2 && cls.status?.readyReplicas === 3
      return counts && update?.reason === 'Partitioned' ? cls : undefined
    }, 120_000, 500)
    const after = (await pods(ns)).filter(live)
    const now = after.map((p) => `${p.metadata.name}/${p.metadata.uid}`).sort()
    t.same(now, identities, 'the same three Pods: names and UIDs')
    const updated = after.filter((p) => p.metadata.labels['jobhooks.io/revision'] === done.status.updatedRevision)
    t.equal(updated.length, 2, 'two Pods at the new revision')
    for (const pod of updated) {
      t.equal(pod.spec.containers[0].image, 'nginx:1.28', `${pod.metadata.name} runs the new image`)
      t.equal(pod.status.containerStatuses[0].image, 'nginx:1.28', `${pod.metadata.name}: restarted with it`)
      t.match(condition(pod, GATE), { status: 'True' }, `${pod.metadata.name} is back in traffic`)
    }
    t.equal(after.filter((p) => p.metadata.labels['jobhooks.io/revision'] === oldRevision).length, 1, 'one kept old')
    const events = await getJson(['get', 'events', '-n', ns, '--field-selector', 'reason=UpdatedPodInPlace'])
    t.equal(events.items.length, 2, 'an Event UpdatedPodInPlace for each')
    const seen = await watch.stop()
    t.ok(seen.fewest >= 2, `never fewer than 2 Ready Pods (fewest seen: ${seen.fewest} in ${seen.samples} samples)`)

    // podToDelete: the named Pod leaves traffic, goes, and a new Pod takes its place.
    const victim = updated[0].metadata.name as string
    const toDelete = { spec: { scaleStrategy: { podToDelete: [victim] } } }
    const deleted = await cluster.kubectl(
      ['patch', 'collaset', 'foo', '-n', ns, '--type', 'merge', '-p', JSON.stringify(toDelete)]
    )
    t.equal(deleted.code, 0, `kubectl patch podToDelete: ${deleted.stderr}`)
    await waitFor(`${victim} gone`, async () => ((await podExists(ns, victim)) ? undefined : true), 60_000, 300)
    const refilled = await waitFor('three Ready Pods again', async () => {
      const list = (await pods(ns)).filter(live)
      return list.length === 3 && list.every(isReady) ? list : undefined
    }, 60_000, 500)
    t.notOk(refilled.some((p) => p.metadata.name === victim), `${victim} is not among them`)
  }
)

t.test('a resources-only change resizes each Pod through pods/resize: same Pods, no restart', async (t) => {
  const ns = await namespace('collaset-resize')
  const foo = example()
  foo.spec.template.spec.containers[0].resources = { requests: { cpu: '100m', memory: '64Mi' } }
  await apply(cluster.kubectl, stringify(foo), ns)
  const first = await waitFor('two Ready Pods of foo', async () => {
    const list = (await pods(ns)).filter(live)
    return list.length === 2 && list.every(isReady) ? list : undefined
  }, 90_000, 500)
  const identities = first.map((p) => `${p.metadata.name}/${p.metadata.uid}`).sort()
  const reported = first[0].status.containerStatuses[0].resources
  t.match(reported, { requests: { cpu: '100m' } }, 'the kubelet reports resources')
  const cpu = [{ op: 'replace', path: '/spec/template/spec/containers/0/resources/requests/cpu', value: '0.2' }]
  const patched = await cluster.kubectl(
    ['patch', 'collaset', 'foo', '-n', ns, '--type', 'json', '-p', JSON.stringify(cpu)]
  )
  t.equal(patched.code, 0, `kubectl patch the cpu request: ${patched.stderr}`)
  const done = await waitFor('both Pods resized and Ready', async () => {
    const cls = await getJson(['get', 'collaset', 'foo', '-n', ns])
    const list = (await pods(ns)).filter(live)
    const resized = list.every((p) => p.status.containerStatuses?.[0]?.resources?.requests?.cpu === '200m')
    return cls.status?.updatedReadyReplicas === 2 && resized && list.every(isReady) ? list : undefined
  }, 120_000, 500)
  t.same(done.map((p) => `${p.metadata.name}/${p.metadata.uid}`).sort(), identities, 'the same Pods: names and UIDs')
  for (const pod of done) {
    t.equal(pod.spec.containers[0].resources.requests.cpu, '200m', `${pod.metadata.name}: its spec resized`)
    t.equal(pod.status.containerStatuses[0].restartCount, 0, `${pod.metadata.name}: not restarted`)
  }
  const events = await getJson(['get', 'events', '-n', ns, '--field-selector', 'reason=ResizedPod'])
  t.equal(events.items.length, 2, 'an Event ResizedPod for each')
})

t.test('podToInclude: a bare Pod whose labels the selector matches is adopted by the CollaSet', async (t) => {
  const ns = await namespace('collaset-include')
  await apply(cluster.kubectl, stringify(example()), ns)
  const [made] = await waitFor('two Ready Pods of foo', async () => {
    const list = (await pods(ns)).filter(live)
    return list.length === 2 && list.every(isReady) ? list : undefined
  }, 90_000, 500)
  // A Pod of the current revision: one of another (or none) would be adopted and then replaced by
  // the rollout at once, faster than this test polls.
  const revision = made.metadata.labels['jobhooks.io/revision']
  const stray = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'stray', labels: { app: 'foo', 'jobhooks.io/revision': revision } },
    spec: { containers: made.spec.containers.map((c: any) => ({ name: c.name, image: c.image })) }
  }
  await apply(cluster.kubectl, stringify(stray), ns)
  const include = { spec: { replicas: 3, scaleStrategy: { podToInclude: ['stray'] } } }
  const patched = await cluster.kubectl(
    ['patch', 'collaset', 'foo', '-n', ns, '--type', 'merge', '-p', JSON.stringify(include)]
  )
  t.equal(patched.code, 0, `kubectl patch podToInclude: ${patched.stderr}`)
  const adopted = await waitFor('stray owned by foo', async () => {
    const pod = await getJson(['get', 'pod', 'stray', '-n', ns])
    const owned = (pod.metadata.ownerReferences ?? []).some((o: any) => o.kind === 'CollaSet' && o.controller)
    return owned ? pod : undefined
  }, 60_000, 500)
  t.ok(adopted.metadata.labels['controller-uid'], 'labelled with the CollaSet\'s controller-uid, then adopted')
  const cls = await waitFor('the CollaSet counts three Pods', async () => {
    const object = await getJson(['get', 'collaset', 'foo', '-n', ns])
    return object.status?.replicas === 3 ? object : undefined
  }, 60_000, 500)
  t.equal(cls.status.replicas, 3, 'the adopted Pod counts')
})

t.test(
  'volumeClaimTemplates: a claim per Pod, owned by the CollaSet; a replacement mounts the same claim (same UID)',
  async (t) => {
    const ns = await namespace('collaset-volumes')
    const foo = example()
    const claimSpec = { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } }
    foo.spec.volumeClaimTemplates = [{ metadata: { name: 'data' }, spec: claimSpec }]
    // The tier has no volume provisioner nor binder: the claims stay Pending, and the scheduler
    // would hold Pods with unbound claims. kwok runs Pods without mounting, so they skip it.
    if (cluster.nodeName !== undefined) foo.spec.template.spec.nodeName = cluster.nodeName
    await apply(cluster.kubectl, stringify(foo), ns)
    const first = await waitFor('two Ready Pods of foo', async () => {
      const list = (await pods(ns)).filter(live)
      return list.length === 2 && list.every(isReady) ? list : undefined
    }, 90_000, 500)
    const claims = async (): Promise<any[]> => (await getJson(['get', 'pvc', '-n', ns])).items
    const mounted = (pod: any): string | undefined =>
      (pod.spec.volumes ?? []).find((v: any) => v.name === 'data')?.persistentVolumeClaim?.claimName
    const before = await waitFor('a claim per Pod', async () => {
      const list = await claims()
      return list.length === 2 ? list : undefined
    }, 30_000, 300)
    t.same(before.map((c) => c.metadata.name).sort(), first.map((p) => `data-${String(p.metadata.name)}`).sort(),
      'data-<pod>, one each')
    for (const pod of first) {
      t.equal(mounted(pod), `data-${String(pod.metadata.name)}`, `${String(pod.metadata.name)} mounts its claim`)
    }
    for (const claim of before) {
      t.match(claim.metadata.ownerReferences, [{ kind: 'CollaSet', name: 'foo', controller: true }],
        `${String(claim.metadata.name)} is owned by foo`)
      t.same(claim.spec.resources, { requests: { storage: '1Gi' } }, 'as the template asks')
    }

    const old = first[0].metadata.name as string
    const claim = before.find((c) => c.metadata.name === `data-${old}`)
    const labelled = await cluster.kubectl(['label', 'pod', old, '-n', ns, 'jobhooks.io/to-replace=true'])
    t.equal(labelled.code, 0, `kubectl label pod ${old} jobhooks.io/to-replace=true: ${labelled.stderr}`)
    const replacement = await waitFor(`a replacement for ${old}`, async () => {
      return (await pods(ns)).find((p) => p.metadata.labels?.['jobhooks.io/replace-origin'] === old)
    }, 60_000, 300)
    t.equal(mounted(replacement), `data-${old}`, "the replacement mounts the origin's claim")
    t.equal(replacement.metadata.labels['jobhooks.io/instance-id'], old, "it is the origin's instance")
    if (first[0].spec.nodeName !== undefined) {
      t.match(replacement.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution,
        { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', values: [first[0].spec.nodeName] }] }] },
        "pinned to the origin's node (ReadWriteOnce)")
    }
    await waitFor(`${old} to be gone`, async () => ((await podExists(ns, old)) ? undefined : true), 60_000, 300)
    await waitFor('two Ready Pods again', async () => {
      const list = (await pods(ns)).filter(live)
      return list.length === 2 && list.every(isReady) ? list : undefined
    }, 60_000, 300)
    const after = await claims()
    t.same(after.map((c) => `${String(c.metadata.name)}/${String(c.metadata.uid)}`).sort(),
      before.map((c) => `${String(c.metadata.name)}/${String(c.metadata.uid)}`).sort(),
      'the same two claims, UIDs unchanged, none added')
    t.ok(claim, `data-${old} existed before`)

    // whenDeleted: Retain: the CollaSet goes, its Pods with it, its claims stay, owned by nothing.
    const retain = { spec: { scaleStrategy: { persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Retain' } } } }
    const patched = await cluster.kubectl(
      ['patch', 'collaset', 'foo', '-n', ns, '--type', 'merge', '-p', JSON.stringify(retain)]
    )
    t.equal(patched.code, 0, `kubectl patch whenDeleted: Retain: ${patched.stderr}`)
    const deleted = await cluster.kubectl(['delete', 'collaset', 'foo', '-n', ns, '--wait=true', '--timeout=60s'])
    t.equal(deleted.code, 0, `kubectl delete collaset foo (the finalize hook released the claims): ${deleted.stderr}`)
    await waitFor('the Pods gone', async () => ((await pods(ns)).length === 0 ? true : undefined), 60_000, 500)
    const kept = await claims()
    t.same(kept.map((c) => `${String(c.metadata.name)}/${String(c.metadata.uid)}`).sort(),
      after.map((c) => `${String(c.metadata.name)}/${String(c.metadata.uid)}`).sort(), 'the claims stay')
    for (const c of kept) {
      t.same(c.metadata.ownerReferences ?? [], [], `${String(c.metadata.name)}: owned by nothing`)
    }
    const events = await getJson(['get', 'events', '-n', ns, '--field-selector', 'reason=ReleasedClaim'])
    t.equal(events.items.length, 2, 'an Event ReleasedClaim for each')
  }
)
