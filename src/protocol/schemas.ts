// The Metacontroller hook wire as TypeBox schemas: what a CompositeController sends to sync,
// finalize and customize hooks, and what it accepts back. Incoming Kubernetes objects stay open
// (they carry status, managedFields and fields we never read); responses are closed at the top
// level because v2 hooks decode them strictly.
import { Type, type Static } from '@sinclair/typebox'

export const KubeObjectSchema = Type.Object({
  apiVersion: Type.String(),
  kind: Type.String(),
  metadata: Type.Object({ name: Type.String() }, { additionalProperties: true })
}, { additionalProperties: true })

/** `"<Kind>.<apiVersion>"` → object key (`name` or `namespace/name`) → object. */
export const ObjectMapSchema = Type.Record(Type.String(), Type.Record(Type.String(), KubeObjectSchema))

export const SyncRequestSchema = Type.Object({
  controller: Type.Optional(Type.Unknown()),
  parent: KubeObjectSchema,
  children: Type.Optional(ObjectMapSchema),
  related: Type.Optional(ObjectMapSchema),
  finalizing: Type.Optional(Type.Boolean())
}, { additionalProperties: true })

/** One effect of a sync as `?effects=show` lists it: the API request the executor sends for it. */
export const ShownEffectSchema = Type.Object({
  effect: Type.String(),
  /** What became of it in this call: applied, gone, failed, refused or dry_run. */
  result: Type.String(),
  message: Type.Optional(Type.String()),
  method: Type.Optional(Type.String()),
  path: Type.Optional(Type.String()),
  body: Type.Optional(Type.Unknown())
}, { additionalProperties: false })

export const SyncResponseSchema = Type.Object({
  status: Type.Record(Type.String(), Type.Unknown()),
  children: Type.Array(KubeObjectSchema),
  resyncAfterSeconds: Type.Optional(Type.Number({ minimum: 0 })),
  finalized: Type.Optional(Type.Boolean()),
  /** Only with `?effects=show`, which Metacontroller never sends (its v2 hooks decode strictly). */
  effects: Type.Optional(Type.Array(ShownEffectSchema))
}, { additionalProperties: false })

export const HookQuerySchema = Type.Object({
  effects: Type.Optional(Type.Literal('show')),
  /** The clock the hooks see, on a service without cluster credentials (src/protocol/pinned-clock.ts). */
  now: Type.Optional(Type.String())
})

export const CustomizeQuerySchema = Type.Object({
  now: Type.Optional(Type.String())
})

export const CustomizeRequestSchema = Type.Object({
  controller: Type.Optional(Type.Unknown()),
  parent: KubeObjectSchema
}, { additionalProperties: true })

export const LabelSelectorSchema = Type.Object({
  matchLabels: Type.Optional(Type.Record(Type.String(), Type.String())),
  matchExpressions: Type.Optional(Type.Array(Type.Object({
    key: Type.String(),
    operator: Type.String(),
    values: Type.Optional(Type.Array(Type.String()))
  })))
})

export const RelatedResourceRuleSchema = Type.Object({
  apiVersion: Type.String(),
  resource: Type.String(),
  labelSelector: Type.Optional(LabelSelectorSchema),
  namespaceSelector: Type.Optional(LabelSelectorSchema),
  namespace: Type.Optional(Type.String()),
  names: Type.Optional(Type.Array(Type.String()))
}, { additionalProperties: false })

export const CustomizeResponseSchema = Type.Object({
  relatedResources: Type.Array(RelatedResourceRuleSchema)
}, { additionalProperties: false })

/** What every refused request gets: a status code and a sentence saying why. */
export const ErrorResponseSchema = Type.Object({
  statusCode: Type.Integer(),
  error: Type.String(),
  message: Type.String()
})

export const HealthResponseSchema = Type.Object({ status: Type.String() })

export type SyncRequestBody = Static<typeof SyncRequestSchema>
export type CustomizeRequestBody = Static<typeof CustomizeRequestSchema>
export type RelatedResourceRule = Static<typeof RelatedResourceRuleSchema>
