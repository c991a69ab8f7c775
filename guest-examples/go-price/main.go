// Command price is the "price" step of the order-pipeline workflow, written in Go: a WASI
// preview-1 command (the command ABI). It reads the workflow's context from stdin, an order
// {"items": [{"quantity", "unit_price_cents"}], "country"?: string, ...}, and prints the keys it
// adds to the context: {"subtotal_cents", "discount_percent", "tax_rate_percent"}.
//
//   - discount: 10 % from 500.00, 5 % from 100.00, else none (amounts in cents);
//   - tax: the standard VAT rate of the order's country (DE 19, FR 20, NL 21, AT 20, GB 20),
//     0 for any other country or none.
//
// Input that does not parse, or an item with a negative amount, is reported on stderr with exit
// status 2 (the job fails without a retry: the same input would fail again).
//
// Build: GOOS=wasip1 GOARCH=wasm go build -o go-price.wasm .
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

type item struct {
	Quantity       int64 `json:"quantity"`
	UnitPriceCents int64 `json:"unit_price_cents"`
}

type order struct {
	Items   []item `json:"items"`
	Country string `json:"country"`
}

type priced struct {
	SubtotalCents   int64 `json:"subtotal_cents"`
	DiscountPercent int   `json:"discount_percent"`
	TaxRatePercent  int   `json:"tax_rate_percent"`
}

var vat = map[string]int{"DE": 19, "FR": 20, "NL": 21, "AT": 20, "GB": 20}

func price(o order) (priced, error) {
	var subtotal int64
	for i, it := range o.Items {
		if it.Quantity < 0 || it.UnitPriceCents < 0 {
			return priced{}, fmt.Errorf("item %d has a negative quantity or price", i+1)
		}
		line := it.Quantity * it.UnitPriceCents
		if it.UnitPriceCents != 0 && line/it.UnitPriceCents != it.Quantity {
			return priced{}, fmt.Errorf("item %d: amount too large", i+1)
		}
		subtotal += line
	}
	discount := 0
	switch {
	case subtotal >= 50000:
		discount = 10
	case subtotal >= 10000:
		discount = 5
	}
	return priced{
		SubtotalCents:   subtotal,
		DiscountPercent: discount,
		TaxRatePercent:  vat[strings.ToUpper(o.Country)],
	}, nil
}

func main() {
	data, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot read stdin: %v\n", err)
		os.Exit(2)
	}
	var o order
	if err := json.Unmarshal(data, &o); err != nil {
		fmt.Fprintf(os.Stderr, "expected an order {\"items\": [...], \"country\"?: string}: %v\n", err)
		os.Exit(2)
	}
	p, err := price(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	out, _ := json.Marshal(p)
	os.Stdout.Write(out)
}
