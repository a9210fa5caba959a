# The operator (manager) image, built with a container engine: `docker build -t linerate.dev/manager:dev .`
# hack/build-images.sh builds the same image without one (cmd/imagebuilder; its spec.go "manager" is this
# file's twin, and cmd/imagebuilder/dockerfile_test.go checks that they agree).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /out/manager ./cmd/manager

# A static binary needs nothing else: no shell, no libc, no package manager in the image.
FROM scratch
LABEL org.opencontainers.image.title="linerate-manager" \
      org.opencontainers.image.source="linerate.dev/linerate"
COPY --from=build /out/manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
