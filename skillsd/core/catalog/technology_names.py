"""Names of technologies a request may be about, for deciding candidates (``skills.suggest``,
docs/hooks.md).

A candidate is a guess: the request fits no skill well enough to activate one. When the request
names a technology (``rust``, ``postgres``, ``docker``, ``pdf``) that a skill's text never
mentions, that skill is a poor guess for it: "why does my rust code fail the borrow checker"
shares the words "fail" and "check" with a CI skill, yet it is a question about Rust. Such a skill
is not offered as a candidate unless it fits closely (``FOREIGN_CANDIDATE`` in
:mod:`skillsd.core.catalog.suggest`); its score, ranking and activation are unchanged, because a
skill that fits well (a CI skill for "the npm step fails in CI") works on technologies it does
not name.

The list is general: languages, frameworks, stores, infrastructure, tools and document and
media formats developers name in requests, fixed like the word weights (it does not depend on
the catalog). Left out:
- names that are ordinary English words as often ("go", "swift", "express", "rails", "react",
  "next", "spark", "poetry", "helm", "bootstrap", "prettier"), or whose matching form is one
  ("windows" is "window", as in "the chat window"): a request using the word would name no
  technology;
- the services where work is shared (Slack, Notion, GitHub, Jira, Gmail) and the text formats
  everything is written in (Markdown, HTML, JSON, CSV): a request names them as the place or the
  form of its result as often as its subject ("write a slack announcement" is about the
  announcement).
"""

from __future__ import annotations

from collections.abc import Iterable

from skillsd.core.catalog.word_forms import word_form

__all__ = ["named_technologies"]

_NAMES = """
python javascript typescript java kotlin scala golang rust ruby php perl haskell elixir erlang
clojure lua dart fortran cobol matlab csharp fsharp cpp objc zig ocaml groovy bash zsh
powershell awk sed sql graphql grpc protobuf wasm webassembly django flask fastapi starlette
sinatra laravel symfony codeigniter springboot nestjs koa hapi actix axum dotnet aspnet blazor
gradle maven cargo npm yarn pnpm pip conda pipenv vue vuejs nuxt svelte sveltekit angularjs
jquery qwik gatsby htmx nextjs tailwind sass scss webpack vite rollup esbuild babel
eslint storybook redux mobx zustand pandas numpy scipy sklearn pytorch tensorflow keras
jax xgboost lightgbm huggingface langchain llamaindex pyspark hadoop kafka flink airflow dbt
dask polars jupyter postgres postgresql mysql mariadb sqlite mssql mongodb mongo redis memcached
cassandra dynamodb couchdb elasticsearch opensearch neo4j clickhouse bigquery redshift supabase
firebase firestore prisma sequelize typeorm sqlalchemy hibernate docker dockerfile kubernetes
k8s kubectl terraform ansible nginx apache haproxy istio prometheus grafana datadog sentry
jenkins circleci travis aws azure gcp ec2 s3 cloudfront cloudflare heroku netlify digitalocean
celery sidekiq rabbitmq zeromq kinesis sqs pytest unittest junit rspec cypress selenium
puppeteer playwright vitest unreal godot opengl vulkan directx webgl threejs android ios xcode
flutter cordova tauri tkinter pyqt qt gtk linux ubuntu debian centos fedora macos wsl
systemd cron ssh ssl tls dns oauth jwt saml ldap latex regex pdf docx xlsx pptx png jpg jpeg gif
svg mp4 mp3
"""
_TECHNOLOGIES = frozenset(word_form(name) for name in _NAMES.split())


def named_technologies(stems: Iterable[str]) -> list[str]:
    """The technologies among a request's matching forms (``stems``), in their order."""
    return [stem for stem in stems if stem in _TECHNOLOGIES]
