"""Runs a plan on Apache Spark (RDD API).  Stage logic lives in the cores; this file only
translates.

Default master is ``local[*]``; under ``spark-submit --master ...`` the session that
spark-submit configured is used as is.  Counts travel with the data (see executor.py) and are
collected on the driver at the end, so task retries never count twice.
"""
from __future__ import annotations

import logging
import os
import sys

from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession

from pipeline.core import executor
from pipeline.core.plan import Plan


QUIET_LOG4J = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2-quiet.properties")


def _quiet() -> bool:
    """Spark logs warnings only, unless Python logs INFO (``lait -v``)."""
    return logging.getLogger().getEffectiveLevel() > logging.INFO


def _quiet_jvm() -> None:
    """A JVM started here gets the quiet log4j2 profile from its start (no banner, no
    native-hadoop warning).  Under spark-submit the JVM already runs, with Spark's INFO
    default; session() lowers it to WARN once the context is up (Spark resets its logging
    when the context starts, so an earlier change does not hold): the start-up lines stay,
    the hundreds of per-job lines go."""
    if not _quiet() or SparkContext._gateway is not None or "PYSPARK_GATEWAY_PORT" in os.environ:
        return
    opts = f"-Dlog4j2.configurationFile=file:{QUIET_LOG4J}"
    SparkContext._ensure_initialized(conf=SparkConf().set("spark.driver.extraJavaOptions", opts))


def session(master: str | None = None, app_name: str = "lait-build", conf: dict | None = None):
    """The active SparkSession, or a new one (local[*] unless ``master`` says otherwise)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)

    active = SparkSession.getActiveSession()
    if active is not None and master is None:
        return active
    _quiet_jvm()
    builder = SparkSession.builder.appName(app_name)
    # Under spark-submit the JVM starts this interpreter with a gateway port and the master
    # it was given; only a plain `python`/`lait` run needs a default master.
    if master or "PYSPARK_GATEWAY_PORT" not in os.environ:
        builder = builder.master(master or "local[*]")
    conf = {"spark.ui.showConsoleProgress": "false", **(conf or {})}
    for k, v in conf.items():
        builder = builder.config(k, v)
    spark = builder.getOrCreate()
    if _quiet() and "PYSPARK_GATEWAY_PORT" in os.environ:
        spark.sparkContext.setLogLevel("WARN")
    return spark


def stop_interrupted(spark) -> None:
    """Stops a session whose jobs a Ctrl-C cancelled, before the driver leaves.  Left running,
    the JVM outlives the driver for a moment, and each task that ends then reports to the
    driver's accumulator server, gone: "ERROR DAGScheduler: Failed to update accumulator" and
    some 40 lines of Java traces after lait's one line.  Stopping while cancelled tasks still
    end logs their teardown errors ("Block broadcast_8 does not exist"): noise of the
    interruption asked for, so Spark's logging is off for it unless ``lait -v``."""
    try:
        if _quiet():
            spark.sparkContext.setLogLevel("OFF")
        spark.stop()
    except Exception:  # noqa: BLE001 (a JVM already gone): the interrupt is what to report
        logging.getLogger(__name__).debug("stopping the interrupted session failed", exc_info=True)


def run(plan: Plan, spark=None, num_partitions: int | None = None) -> executor.RunSummary:
    spark = spark or session()
    sc = spark.sparkContext
    n = num_partitions or max(sc.defaultParallelism, 1)
    rdd = sc.parallelize(plan.parts, max(1, min(len(plan.parts), n)) if plan.parts else 1)
    for i, step in enumerate(plan.steps):
        if step.kind == "source":
            rdd = rdd.mapPartitions(lambda it, s=step: executor.run_source_partition(s, it))
            if n > 1:
                rdd = rdd.repartition(n)  # a few big WARC files must not cap parallelism
        elif step.kind == "map":
            rdd = rdd.mapPartitions(lambda it, s=step: executor.run_map_partition(s, it))
        else:
            rdd = (rdd.map(lambda it, s=step: (executor.group_key(s, it), it))
                   .groupByKey(n)
                   .mapPartitions(lambda groups, s=step: executor.run_group_partition(s, groups)))
    items = rdd.filter(lambda it: it[0] != "r").collect()
    return executor.RunSummary(plan.step_names, items)
