package sasl
