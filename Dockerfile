# qbench's container image, for qbench k8s (and any machine without Go). No registry publishes
# it: build it and push it where your cluster pulls from:
#
#   docker build -t REGISTRY/qbench:TAG .
#   docker push REGISTRY/qbench:TAG
#   qbench k8s scenario.yaml --segments 4 --image REGISTRY/qbench:TAG | kubectl apply -f -
#
# A static binary (CGO_ENABLED=0) on distroless/static: no shell, no package manager, no tar
# (qbench k8s collect fetches results with kubectl exec ... qbench k8s cat, not kubectl cp).
# The user is numeric so that the kubelet can check the manifests' runAsNonRoot.

FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The VCS revision goes into qbench version when .git is in the context; -buildvcs=auto leaves
# it out without failing when it is not.
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=auto -ldflags="-s -w" -o /out/qbench ./cmd/qbench

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/qbench /usr/local/bin/qbench
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/qbench"]
