package main

// The subset of the Kubernetes API's objects qbench k8s emits, with the API's field names:
// v1 Secret, batch/v1 Job (JobSpec, PodFailurePolicy, PodTemplateSpec, PodSpec, Container,
// ResourceRequirements, SecurityContext, VolumeMount, Volume, TopologySpreadConstraint) and v1
// PersistentVolumeClaim. TestK8sManifestDecodesStrictly decodes the output into k8s.io/api's own
// types with unknown fields refused, so a typo here fails a test, not an apply.

type k8sObject struct {
	APIVersion string            `yaml:"apiVersion"`
	Kind       string            `yaml:"kind"`
	Metadata   k8sMeta           `yaml:"metadata"`
	Type       string            `yaml:"type,omitempty"`
	StringData map[string]string `yaml:"stringData,omitempty"`
	Spec       any               `yaml:"spec,omitempty"`
}

type k8sMeta struct {
	Name        string            `yaml:"name,omitempty"`
	Namespace   string            `yaml:"namespace,omitempty"`
	Labels      map[string]string `yaml:"labels,omitempty"`
	Annotations map[string]string `yaml:"annotations,omitempty"`
}

type jobSpec struct {
	CompletionMode          string            `yaml:"completionMode,omitempty"`
	Completions             *int              `yaml:"completions,omitempty"`
	Parallelism             *int              `yaml:"parallelism,omitempty"`
	BackoffLimit            *int              `yaml:"backoffLimit,omitempty"`
	BackoffLimitPerIndex    *int              `yaml:"backoffLimitPerIndex,omitempty"`
	PodFailurePolicy        *podFailurePolicy `yaml:"podFailurePolicy,omitempty"`
	TTLSecondsAfterFinished *int              `yaml:"ttlSecondsAfterFinished,omitempty"`
	Template                podTemplate       `yaml:"template"`
}

type podFailurePolicy struct {
	Rules []podFailureRule `yaml:"rules"`
}

type podFailureRule struct {
	Action          string           `yaml:"action"`
	OnExitCodes     *onExitCodes     `yaml:"onExitCodes,omitempty"`
	OnPodConditions []onPodCondition `yaml:"onPodConditions,omitempty"`
}

type onExitCodes struct {
	Operator string `yaml:"operator"`
	Values   []int  `yaml:"values"`
}

type onPodCondition struct {
	Type   string `yaml:"type"`
	Status string `yaml:"status"`
}

type podTemplate struct {
	Metadata k8sMeta `yaml:"metadata"`
	Spec     podSpec `yaml:"spec"`
}

type podSpec struct {
	RestartPolicy             string              `yaml:"restartPolicy"`
	SecurityContext           *podSecurityContext `yaml:"securityContext,omitempty"`
	TopologySpreadConstraints []topologySpread    `yaml:"topologySpreadConstraints,omitempty"`
	InitContainers            []container         `yaml:"initContainers,omitempty"`
	Containers                []container         `yaml:"containers"`
	Volumes                   []volume            `yaml:"volumes"`
}

type podSecurityContext struct {
	RunAsNonRoot   bool            `yaml:"runAsNonRoot"`
	SeccompProfile *seccompProfile `yaml:"seccompProfile,omitempty"`
}

type seccompProfile struct {
	Type string `yaml:"type"`
}

type topologySpread struct {
	MaxSkew           int           `yaml:"maxSkew"`
	TopologyKey       string        `yaml:"topologyKey"`
	WhenUnsatisfiable string        `yaml:"whenUnsatisfiable"`
	LabelSelector     labelSelector `yaml:"labelSelector"`
}

type labelSelector struct {
	MatchLabels map[string]string `yaml:"matchLabels"`
}

type container struct {
	Name            string           `yaml:"name"`
	Image           string           `yaml:"image"`
	Command         []string         `yaml:"command"`
	Args            []string         `yaml:"args"`
	Resources       resources        `yaml:"resources"`
	Ports           []containerPort  `yaml:"ports,omitempty"`
	SecurityContext *securityContext `yaml:"securityContext,omitempty"`
	VolumeMounts    []volumeMount    `yaml:"volumeMounts"`
}

type containerPort struct {
	Name          string `yaml:"name"`
	ContainerPort int    `yaml:"containerPort"`
	Protocol      string `yaml:"protocol"`
}

type resources struct {
	Requests map[string]string `yaml:"requests,omitempty"`
	Limits   map[string]string `yaml:"limits,omitempty"`
}

type securityContext struct {
	AllowPrivilegeEscalation bool         `yaml:"allowPrivilegeEscalation"`
	ReadOnlyRootFilesystem   bool         `yaml:"readOnlyRootFilesystem"`
	Capabilities             capabilities `yaml:"capabilities"`
}

type capabilities struct {
	Drop []string `yaml:"drop"`
}

type volumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
	ReadOnly  bool   `yaml:"readOnly,omitempty"`
}

type volume struct {
	Name                  string          `yaml:"name"`
	Secret                *secretRef      `yaml:"secret,omitempty"`
	EmptyDir              *emptyDirSource `yaml:"emptyDir,omitempty"`
	PersistentVolumeClaim *claimRef       `yaml:"persistentVolumeClaim,omitempty"`
}

type secretRef struct {
	SecretName string `yaml:"secretName"`
}

type emptyDirSource struct {
	SizeLimit string `yaml:"sizeLimit,omitempty"`
}

type claimRef struct {
	ClaimName string `yaml:"claimName"`
}

type pvcSpec struct {
	AccessModes      []string     `yaml:"accessModes"`
	StorageClassName *string      `yaml:"storageClassName,omitempty"`
	Resources        pvcResources `yaml:"resources"`
}

type pvcResources struct {
	Requests map[string]string `yaml:"requests"`
}
