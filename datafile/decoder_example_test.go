package datafile_test

import (
	"fmt"

	"github.com/procurekit/procure/datafile"
	"github.com/procurekit/procure/supplier"
)

// A Decoder per goroutine decodes stored JSON as json.Unmarshal would:
// here a contact and a supplier's nested objects, as pgstore keeps them.
func ExampleDecoder() {
	d := datafile.NewDecoder()
	var c supplier.Contact
	if err := d.Contact([]byte(`{"id":"6f1d1f4e-2b1a-4c1e-9a51-4b9f4f0c2a10","name":"Ana Ruiz \u0026 Co","email":"ana@example.com",
		"modifiedDate":"2025-03-01T09:30:00Z","createdDate":"2024-01-01T00:00:00Z"}`), &c); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.Name, c.Email.String())

	var r supplier.Record
	err := d.Record([]byte(`{"emails":{"ordersEmailAddress":"orders@example.com"}}`), &r)
	fmt.Println(r.Emails.OrdersEmailAddress.String(), err)

	err = d.Contact([]byte(`{"id":"not a uuid","name":"x"}`), &c)
	fmt.Println(err != nil)
	// Output:
	// Ana Ruiz & Co ana@example.com
	// orders@example.com <nil>
	// true
}
