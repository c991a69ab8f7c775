# taskbox: one binary serving the queue on the embedded SQLite default.
#   docker build -t taskbox .
#   docker run -p 8080:8080 -v taskbox-data:/data taskbox
# The admin token is printed once on the first start (docker logs), or set it
# with -e TASKBOX_ADMIN_TOKEN=….

FROM rust:1.95-bookworm AS build
WORKDIR /src
# Dependencies first, so that a source change does not rebuild them. The
# workspace's other member (the benchmarks) is stubbed: cargo reads every
# member's manifest, and the image ships only the product.
COPY Cargo.toml Cargo.lock ./
COPY crates/taskbox-bench/Cargo.toml crates/taskbox-bench/
RUN mkdir -p src tests/it crates/taskbox-bench/src \
    && echo 'fn main() {}' > src/main.rs && touch src/lib.rs tests/it/main.rs \
    && echo 'fn main() {}' > crates/taskbox-bench/src/main.rs && touch crates/taskbox-bench/src/lib.rs \
    && cargo build --profile dist --locked -p taskbox \
    && rm -rf src tests crates/taskbox-bench/src
COPY . .
# The dist profile: release, stripped of its debug info and symbols.
RUN touch src/main.rs src/lib.rs && cargo build --profile dist --locked -p taskbox --bin taskbox

FROM debian:bookworm-slim
RUN useradd --system --uid 10001 --user-group --home-dir /data --shell /usr/sbin/nologin taskbox \
    && mkdir -p /data && chown taskbox:taskbox /data
COPY --from=build /src/target/dist/taskbox /usr/local/bin/taskbox
USER taskbox:taskbox
ENV TASKBOX_DATA_DIR=/data \
    TASKBOX_LISTEN=0.0.0.0:8080
VOLUME ["/data"]
EXPOSE 8080
STOPSIGNAL SIGTERM
# The binary asks its own /healthz (the image has no curl): the API answers
# and the database does.
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD ["taskbox", "health", "--url", "http://127.0.0.1:8080"]
ENTRYPOINT ["taskbox"]
CMD ["serve"]
