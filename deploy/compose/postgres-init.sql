-- Runs once, when the postgres container initialises an empty data volume.
-- One database per unit (docs/architecture.md, Units and what they own). The services would also
-- create their own database if missing; creating them here keeps that path for production only.
CREATE DATABASE pgw_operations;
CREATE DATABASE pgw_routing;
CREATE DATABASE pgw_ledger;
CREATE DATABASE pgw_receipts;
CREATE DATABASE pgw_notifier;
CREATE DATABASE pgw_sandbox;
