{{/*
Names are fixed, as in manifests/: the CRDs and CompositeControllers are cluster-wide, so a cluster
holds one jobhooks install, whatever the release is called.
*/}}

{{/* The labels every object of manifests/ carries, then Helm's own. */}}
{{- define "jobhooks.labels" -}}
app.kubernetes.io/name: jobhooks
app.kubernetes.io/part-of: jobhooks
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{/* What the Service, PDB and NetworkPolicy select: the Deployment's pods. */}}
{{- define "jobhooks.selector" -}}
app.kubernetes.io/name: jobhooks
app.kubernetes.io/component: hooks
{{- end }}

{{- define "jobhooks.image" -}}
{{- if .Values.image.digest -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ required "image.tag or image.digest is required" .Values.image.tag }}
{{- end -}}
{{- end }}

{{/* The Secret holding the hook token, and its key. */}}
{{- define "jobhooks.tokenSecret" -}}
{{ .Values.token.existingSecret | default "jobhooks-hook-token" }}
{{- end }}

{{- define "jobhooks.tokenKey" -}}
{{ if .Values.token.existingSecret }}{{ required "token.existingSecretKey is required with token.existingSecret" .Values.token.existingSecretKey }}{{ else }}token{{ end }}
{{- end }}

{{/* The container port's name: a mesh reads the protocol from it, so TLS must not be called http. */}}
{{- define "jobhooks.portName" -}}
{{ if .Values.tls.enabled }}https{{ else }}http{{ end }}
{{- end }}

{{- define "jobhooks.checkValues" -}}
{{- if and .Values.tls.mutual.enabled (not .Values.tls.enabled) -}}
{{- fail "tls.mutual.enabled needs tls.enabled: mutual TLS is HTTPS with client certificates" -}}
{{- end -}}
{{- if and .Values.tls.enabled (not .Values.tls.secretName) -}}
{{- fail "tls.secretName is required with tls.enabled" -}}
{{- end -}}
{{- if and .Values.tls.mutual.enabled (not .Values.tls.mutual.clientSecretName) -}}
{{- fail "tls.mutual.clientSecretName is required with tls.mutual.enabled" -}}
{{- end -}}
{{- end }}

{{/*
One hook's webhook, given the root context and the webhook as manifests/controllers has it: the
same, but for where it calls (the chart's Service in the release namespace, or controllers.hooksURL),
the token's Secret, and with TLS the CA and the client certificate. Anything else in it (timeout,
...) is kept.
*/}}
{{- define "jobhooks.webhook" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
{{- $ns := $root.Release.Namespace -}}
{{- $webhook := deepCopy .webhook -}}
{{- $path := required "every webhook of manifests/controllers has a path" $webhook.path -}}
{{- if $v.controllers.hooksURL -}}
{{- $_ := unset $webhook "service" -}}
{{- $_ := unset $webhook "path" -}}
{{- $_ := set $webhook "url" (printf "%s%s" (trimSuffix "/" $v.controllers.hooksURL) $path) -}}
{{- else -}}
{{- $service := dict "name" "jobhooks" "namespace" $ns "port" 80 -}}
{{- if $v.tls.enabled }}{{ $_ := set $service "protocol" "https" }}{{ end -}}
{{- $_ := set $webhook "service" $service -}}
{{- end -}}
{{- if $v.tls.enabled -}}
{{- $_ := set $webhook "caBundle" (dict "secretRef" (dict "name" $v.tls.secretName "namespace" $ns "key" "ca.crt")) -}}
{{- end -}}
{{- if $v.tls.mutual.enabled -}}
{{- $_ := set $webhook "clientTLS" (dict "secretRef" (dict "name" $v.tls.mutual.clientSecretName "namespace" $ns)) -}}
{{- end -}}
{{- $_ := set $webhook "authorization" (dict "type" "Bearer" "secretRef" (dict "name" (include "jobhooks.tokenSecret" $root) "namespace" $ns "key" (include "jobhooks.tokenKey" $root))) -}}
{{- toYaml $webhook -}}
{{- end }}
