# The image deploy/controller/deployment.yaml runs: `kozmo` built on Debian bookworm from the
# packages scripts/setup.sh installs, copied into a slim bookworm with only the shared libraries
# it links, run as uid 65532 (non-root; the root file system may be read-only).
#   docker build -t kozmo:0.1 .
FROM debian:bookworm AS build
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      meson ninja-build pkg-config g++ libcaf-dev libboost-dev libboost-system-dev libssl-dev \
      libsimdjson-dev libspdlog-dev libfmt-dev prometheus-cpp-dev libyaml-cpp-dev python3 \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN meson setup /build --buildtype=release --wrap-mode=nofallback -Dtests=false -Dbench=false \
    && ninja -C /build kozmo

FROM debian:bookworm-slim
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libcaf-core0.17 libfmt9 libprometheus-cpp-core1.0 libsimdjson14 libspdlog1.10 libssl3 \
      libyaml-cpp0.7 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /build/kozmo /usr/local/bin/kozmo
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/kozmo"]
CMD ["controller"]
